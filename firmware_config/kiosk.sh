#!/bin/sh
# dicetable kiosk: wait for the app's health endpoint, then show the page full screen.
# Started by labwc (Raspberry Pi OS Bookworm's desktop) from ~/.config/labwc/autostart, or by
# wayfire (Bookworm's earlier one) from ~/.config/wayfire.ini [autostart]. --start-maximized beside
# --kiosk: without it some Bookworm kiosks show a 1-px strip (raspberrypi/bookworm-feedback #31).
URL="${DICETABLE_URL:-http://127.0.0.1:8000/}"
i=0
while [ "$i" -lt 120 ]; do
    if curl -fsS "${URL}health" >/dev/null 2>&1; then
        break
    fi
    i=$((i + 1))
    sleep 1
done
BROWSER=chromium-browser
if ! command -v "$BROWSER" >/dev/null 2>&1; then
    BROWSER=chromium
fi
exec "$BROWSER" --kiosk --start-maximized --noerrdialogs --disable-infobars --no-first-run \
    --disable-session-crashed-bubble --check-for-update-interval=31536000 \
    --disable-features=Translate --overscroll-history-navigation=0 "$URL"
