#!/usr/bin/env bash
# Debian's chromium for the report's browser test (tests/integration/report_html.rs loads
# reports/index.html headless, fails on a console message or a chart not drawn, and saves a
# screenshot of the first screen into target/ci-logs/). Nothing to do when it is installed.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    /usr/bin/chromium --version
    exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium
/usr/bin/chromium --version
