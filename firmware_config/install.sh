#!/usr/bin/env bash
# Install dicetable on Raspberry Pi OS Bookworm (Pi 4 or Pi 5). Safe to run twice.
#
#   cd dicetable && sudo firmware_config/install.sh
#
# What it does: apt packages (python3-picamera2, python3-lgpio, Chromium), a venv
# with --system-site-packages (so picamera2 and lgpio from apt are seen) holding
# 'pip install .[pi]', the user in the video and gpio groups, the camera and display
# lines in config.txt, the dicetable systemd service, the Chromium kiosk in labwc's
# autostart, and screen blanking off. Reboot afterwards.
#
# Settings (environment): DICETABLE_USER (default: the user who ran sudo),
# DICETABLE_ARGS (default: "--camera picamera2"), DICETABLE_ROOT (prefix for /etc,
# /boot and /home; tests only).
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
apt-get install -y python3-venv python3-pip python3-picamera2 python3-lgpio curl
apt-get install -y chromium-browser || apt-get install -y chromium

say "venv in ${HERE}/.venv (with the system's picamera2 and lgpio)"
if [ ! -x "${HERE}/.venv/bin/python" ]; then
    "${PYTHON}" -m venv --system-site-packages "${HERE}/.venv"
fi
"${HERE}/.venv/bin/pip" install --upgrade "${HERE}[pi]"
chown -R "${USER_NAME}:" "${HERE}/.venv" 2>/dev/null || true

say "user ${USER_NAME} in the video and gpio groups"
usermod -a -G video,gpio "${USER_NAME}"

say "camera and display lines in config.txt"
CONFIG="${ROOT}/boot/firmware/config.txt"
if [ ! -f "${CONFIG}" ]; then
    CONFIG="${ROOT}/boot/config.txt"
fi
if [ -f "${CONFIG}" ] && ! grep -qF "${BEGIN}" "${CONFIG}"; then
    cp "${CONFIG}" "${CONFIG}.before-dicetable"
    sed -n "/${BEGIN}/,/# --- dicetable end ---/p" "${HERE}/firmware_config/config.txt" >> "${CONFIG}"
fi

say "systemd service dicetable"
UNIT="${ROOT}/etc/systemd/system/dicetable.service"
mkdir -p "$(dirname "${UNIT}")"
sed -e "s|@USER@|${USER_NAME}|g" -e "s|@DIR@|${HERE}|g" -e "s|@ARGS@|${ARGS}|g" \
    "${HERE}/firmware_config/dicetable.service" > "${UNIT}"
systemctl daemon-reload
systemctl enable dicetable.service
systemctl restart dicetable.service

say "Chromium kiosk in labwc's autostart"
AUTOSTART="${HOME_DIR}/.config/labwc/autostart"
mkdir -p "$(dirname "${AUTOSTART}")"
touch "${AUTOSTART}"
LINE="${HERE}/firmware_config/kiosk.sh &"
if ! grep -qF "${LINE}" "${AUTOSTART}"; then
    printf '%s\n' "${LINE}" >> "${AUTOSTART}"
fi
chown -R "${USER_NAME}:" "${HOME_DIR}/.config" 2>/dev/null || true

say "screen blanking off"
if command -v raspi-config >/dev/null 2>&1; then
    raspi-config nonint do_blanking 1
fi

say "done: reboot (sudo reboot); then the table's page opens full screen"
