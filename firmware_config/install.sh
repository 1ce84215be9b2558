#!/usr/bin/env bash
# Install dicetable on Raspberry Pi OS Bookworm (Pi 4 or Pi 5). Safe to run twice.
#
#   cd dicetable && sudo firmware_config/install.sh
#
# What it does: apt packages (python3-numpy, python3-picamera2, python3-lgpio, Chromium), a
# venv with --system-site-packages (so picamera2, lgpio and apt's numpy are seen) holding
# 'pip install .[pi]' constrained to apt's numpy (pi_constraints.py: picamera2's simplejpeg
# is built against it), the user in the video and gpio groups, the camera and display lines
# in config.txt, the dicetable systemd service, the Chromium kiosk in the autostart of labwc
# and, where the user has a wayfire.ini, of wayfire (Bookworm's earlier desktop), and screen
# blanking off. Reboot afterwards. The service's log: journalctl -u dicetable -f
#
# Settings (environment): DICETABLE_USER (default: the user who ran sudo),
# DICETABLE_ARGS (default: "--camera picamera2"), PYTHON (default: python3, the system's),
# DICETABLE_ROOT (prefix for /etc, /boot and /home; tests only).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="${DICETABLE_ROOT:-}"
USER_NAME="${DICETABLE_USER:-${SUDO_USER:-$(id -un)}}"
ARGS="${DICETABLE_ARGS:---camera picamera2}"
PYTHON="${PYTHON:-python3}"
HOME_DIR="${ROOT}/home/${USER_NAME}"
if [ "${USER_NAME}" = "root" ]; then
    HOME_DIR="${ROOT}/root"
fi
BEGIN="# --- dicetable begin ---"

say() { printf 'dicetable install: %s\n' "$*"; }

if [ -z "${ROOT}" ] && [ "$(id -u)" -ne 0 ]; then
    echo "dicetable install: run it as root: sudo $0" >&2
    exit 2
fi

say "apt packages"
apt-get update
apt-get install -y python3-venv python3-pip python3-numpy python3-picamera2 python3-lgpio curl
apt-get install -y chromium-browser || apt-get install -y chromium

VENV="${HERE}/.venv"
say "venv in ${VENV} (with the system's numpy, picamera2 and lgpio)"
if [ ! -x "${VENV}/bin/python" ]; then
    "${PYTHON}" -m venv --system-site-packages "${VENV}"
fi
# Keep apt's numpy: a numpy 2 from pip would hide it, and picamera2's simplejpeg (built against
# apt's numpy) would fail to import. An earlier install may have put such a numpy in the venv.
CONSTRAINTS="${VENV}/dicetable-constraints.txt"
if "${PYTHON}" "${HERE}/firmware_config/pi_constraints.py" > "${CONSTRAINTS}"; then
    say "pip keeps the system's $(grep '^numpy==' "${CONSTRAINTS}") (${CONSTRAINTS})"
    if "${VENV}/bin/python" -c 'import os, sys, numpy; sys.exit(not os.path.realpath(numpy.__file__).startswith(os.path.realpath(sys.prefix) + os.sep))' 2>/dev/null; then
        say "removing the venv's own numpy, which hides the system's"
        "${VENV}/bin/pip" uninstall -y numpy
    fi
else
    say "warning: ${PYTHON} has no numpy (apt-get install python3-numpy): pip installs its own, and picamera2 may fail to import"
fi
"${VENV}/bin/pip" install --upgrade -c "${CONSTRAINTS}" "${HERE}[pi]"
chown -R "${USER_NAME}:" "${VENV}" 2>/dev/null || true

say "user ${USER_NAME} in the video and gpio groups"
usermod -a -G video,gpio "${USER_NAME}"

say "camera and display lines in config.txt"
CONFIG="${ROOT}/boot/firmware/config.txt"
if [ ! -f "${CONFIG}" ]; then
    CONFIG="${ROOT}/boot/config.txt"
fi
END="# --- dicetable end ---"
BLOCK="$(sed -n "/${BEGIN}/,/${END}/p" "${HERE}/firmware_config/config.txt")"
if [ -f "${CONFIG}" ] && [ "$(sed -n "/${BEGIN}/,/${END}/p" "${CONFIG}")" != "${BLOCK}" ]; then
    if [ ! -f "${CONFIG}.before-dicetable" ]; then
        cp "${CONFIG}" "${CONFIG}.before-dicetable"
    fi
    # An older dicetable block is replaced; the block goes last, after a line break.
    sed -i "/${BEGIN}/,/${END}/d" "${CONFIG}"
    if [ -s "${CONFIG}" ] && [ -n "$(tail -c 1 "${CONFIG}")" ]; then
        printf '\n' >> "${CONFIG}"
    fi
    printf '%s\n' "${BLOCK}" >> "${CONFIG}"
fi

say "systemd service dicetable"
UNIT="${ROOT}/etc/systemd/system/dicetable.service"
mkdir -p "$(dirname "${UNIT}")"
sed -e "s|@USER@|${USER_NAME}|g" -e "s|@DIR@|${HERE}|g" -e "s|@ARGS@|${ARGS}|g" \
    "${HERE}/firmware_config/dicetable.service" > "${UNIT}"
systemctl daemon-reload
systemctl enable dicetable.service
systemctl restart dicetable.service

KIOSK="${HERE}/firmware_config/kiosk.sh"
say "Chromium kiosk in labwc's autostart (${HOME_DIR}/.config/labwc/autostart)"
AUTOSTART="${HOME_DIR}/.config/labwc/autostart"
mkdir -p "$(dirname "${AUTOSTART}")"
touch "${AUTOSTART}"
LINE="${KIOSK} &"
if ! grep -qF "${LINE}" "${AUTOSTART}"; then
    printf '%s\n' "${LINE}" >> "${AUTOSTART}"
fi
# wayfire (Bookworm's desktop before labwc): "dicetable = KIOSK" in the [autostart] section of
# the user's wayfire.ini (the section is made when absent; an older dicetable line is replaced).
# Only an existing wayfire.ini is edited: a new one would hold nothing but this section.
WAYFIRE="${HOME_DIR}/.config/wayfire.ini"
if [ -f "${WAYFIRE}" ]; then
    say "Chromium kiosk in wayfire's autostart (${WAYFIRE} [autostart])"
    if ! grep -qxF "dicetable = ${KIOSK}" "${WAYFIRE}"; then
        awk -v line="dicetable = ${KIOSK}" '
            /^dicetable[ \t]*=/ { next }
            { print }
            /^\[autostart\][ \t]*$/ && !done { print line; done = 1 }
            END { if (!done) { if (NR) print ""; print "[autostart]"; print line } }
        ' "${WAYFIRE}" > "${WAYFIRE}.dicetable-new"
        mv "${WAYFIRE}.dicetable-new" "${WAYFIRE}"
    fi
else
    say "wayfire not set up (no ${WAYFIRE}): the kiosk starts on labwc, Bookworm's desktop; on wayfire, log in to it once and run install.sh again"
fi
chown -R "${USER_NAME}:" "${HOME_DIR}/.config" 2>/dev/null || true

say "screen blanking off"
if command -v raspi-config >/dev/null 2>&1; then
    raspi-config nonint do_blanking 1
fi

say "done: reboot (sudo reboot); then the table's page opens full screen. The service's log: journalctl -u dicetable -f"
