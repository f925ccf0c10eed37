#!/bin/sh
# Measures data.ImportLibSVM at KDD Cup 2012 scale (issue 12 §2); not part of
# CI. Generates a KDD-shaped libsvm file of $ROWS rows (default 10M; see
# scripts/gen-kdd), compresses it with Debian's bzip2 as the libsvm collection
# ships it, then times, each under /usr/bin/time -v (maximum RSS):
#   1. C bzip2 decompression alone (bzip2 -dc);
#   2. Go's compress/bzip2 alone, as the importer uses it (BenchmarkDecompressFile);
#   3. the whole import (BenchmarkImportLibSVMFile): rows/s, MB/s stored and decompressed.
# Generated files stay under $BENCH_DIR (default /tmp/labelprivacy-import-bench),
# reused by later runs. Run from the repository root.
set -eu
ROWS=${ROWS:-10000000}
DIR=${BENCH_DIR:-/tmp/labelprivacy-import-bench}
need() { command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2"; }; }
need bzip2 bzip2
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }
mkdir -p "$DIR"
IN=$DIR/kdd-$ROWS.libsvm.bz2
if [ ! -s "$IN" ]; then
	echo "generating $IN"
	go run ./scripts/gen-kdd -rows "$ROWS" | bzip2 -9 >"$IN.tmp"
	mv "$IN.tmp" "$IN"
fi
ls -l "$IN"
go test -c -o "$DIR/data.test" ./data
tv() { /usr/bin/time -f '%e s wall, %U s user, %M KiB max RSS' "$@"; }
echo "== C bzip2 -dc alone"
tv sh -c "bzip2 -dc '$IN' | wc -c"
echo "== Go compress/bzip2 alone"
LABELPRIVACY_BENCH_LIBSVM=$IN tv "$DIR/data.test" -test.run '^$' -test.bench '^BenchmarkDecompressFile$' -test.benchtime 1x
echo "== data.ImportLibSVM"
LABELPRIVACY_BENCH_LIBSVM=$IN tv "$DIR/data.test" -test.run '^$' -test.bench '^BenchmarkImportLibSVMFile$' -test.benchtime 1x -test.v
