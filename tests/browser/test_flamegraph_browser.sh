#!/bin/sh
# flamegraph.svg in Debian's chromium, headless, driven by puppeteer-core
# (flamegraph_browser.js). The page is the golden flame graph the exporter's
# real code writes (tests/data/golden/expected/flamegraph.svg).
# puppeteer-core is installed from npm into BUILD_DIR/browser-test (not the
# source tree) on the first run.
#   usage: test_flamegraph_browser.sh SOURCE_DIR BUILD_DIR
set -eu
SRC=$1
BUILD=$2
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "SKIP: chromium is not installed (apt-get install chromium)" >&2
	exit 77
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "SKIP: node or npm is not installed (apt-get install nodejs npm)" >&2
	exit 77
fi
dir=$BUILD/browser-test
mkdir -p "$dir"
if [ ! -d "$dir/node_modules/puppeteer-core" ]; then
	(cd "$dir" && npm install --no-audit --no-fund --silent puppeteer-core) ||
		{ echo "FAIL: npm install puppeteer-core failed" >&2; exit 1; }
fi
cp "$SRC/tests/browser/flamegraph_browser.js" "$dir/"
HOME=$dir exec node "$dir/flamegraph_browser.js" "$chromium" \
	"$SRC/tests/data/golden/expected/flamegraph.svg" "$dir/flamegraph.png"
