#!/bin/sh
# dicetable kiosk: wait for the app's health endpoint, then show the page full screen.
# Started by labwc (Raspberry Pi OS Bookworm's desktop) from ~/.config/labwc/autostart.
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
exec "$BROWSER" --kiosk --noerrdialogs --disable-infobars --no-first-run \
    --disable-session-crashed-bubble --check-for-update-interval=31536000 \
    --disable-features=Translate --overscroll-history-navigation=0 "$URL"
