#!/bin/sh
# checkm.sh FILE.m... - syntax- and type-check Objective-C shims on Linux:
# clang -fsyntax-only with ARC and the Apple runtime's semantics, against
# the minimal Foundation/Metal stubs next to this script, warnings as
# errors. It catches syntax errors, definitions that disagree with the
# shim's C header (the one the cgo preamble includes), ARC bridging
# mistakes, and unknown selectors (in messages and in @selector) or
# properties as far as the stubs declare them. It does not prove the file
# builds against Apple's SDK:
# the stubs are hand-written, so a Mac build is the final word.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "checkm.sh: $cc not found (set CLANG or install clang)" >&2
	exit 2
fi
if [ "$#" -eq 0 ]; then
	echo "usage: checkm.sh FILE.m..." >&2
	exit 2
fi
rc=0
for f in "$@"; do
	if "$cc" -fsyntax-only -x objective-c -fobjc-runtime=macosx-11.0 -fobjc-arc \
		-Wall -Wextra -Wundeclared-selector -Wno-unused-parameter -Wno-unused-function -Werror \
		-isystem "$here" -I "$(dirname "$f")" "$f"; then
		echo "ok  $f"
	else
		rc=1
	fi
done
exit $rc
