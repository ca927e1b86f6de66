#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# description: the patch-series workflow round-trips and never destroys work
#
# Runs scripts/kernel-tree against a small stand-in for the linux-source
# tarball in a scratch directory: apply, commit, export, re-apply.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/selftests/lib/ktap.sh"
ktap_plan 12

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KTREE_TOP=$work/repo KTREE_BUILD=$work/repo/build
export LINUX_TARBALL=$work/linux-source-6.1.tar.xz
kt="$TOP/scripts/kernel-tree"
tree=$KTREE_BUILD/linux

mkdir -p "$work/src/linux-source-6.1/kernel" "$work/src/linux-source-6.1/tools/perf" \
	"$KTREE_TOP/kernel-patches" "$KTREE_TOP/tools-perf-patches"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n' > "$work/src/linux-source-6.1/Makefile"
echo "int x;" > "$work/src/linux-source-6.1/kernel/a.c"
echo "int y;" > "$work/src/linux-source-6.1/tools/perf/b.c"
tar -cJf "$LINUX_TARBALL" -C "$work/src" linux-source-6.1

ktap_check "apply unpacks a tree with a base tag" bash -c "$kt apply && git -C $tree rev-parse -q --verify bpf64-base"

commit() { # FILE TEXT SUBJECT
	echo "$2" >> "$tree/$1" && git -C "$tree" commit -qam "$3" \
		--author="Dev <dev@example.org>" --date="2026-01-01T00:00:00Z"
}
commit kernel/a.c "int x2;" "kernel: change a"
commit tools/perf/b.c "int y2;" "perf: change b"
commit kernel/a.c "int x3;" "kernel: change a again"

ktap_check "export refuses a kernel commit after a perf commit" \
	bash -c "! $kt export >/dev/null 2>&1 && $kt export 2>&1 | grep -q 'comes after a tools/perf commit'"
git -C "$tree" reset -q --hard bpf64-base
commit kernel/a.c "int x2;" "kernel: change a"
commit kernel/a.c "int x3;" "kernel: change a again"
commit tools/perf/b.c "int y2;" "perf: change b"

ktap_check "export splits the series by tools/perf" bash -c "$kt export >/dev/null &&
	ls $KTREE_TOP/kernel-patches/0001-*.patch $KTREE_TOP/kernel-patches/0002-*.patch \
	   $KTREE_TOP/tools-perf-patches/0001-*.patch >/dev/null"
ktap_check "each series has a cover letter" bash -c "ls $KTREE_TOP/kernel-patches/0000-cover-letter.patch $KTREE_TOP/tools-perf-patches/0000-cover-letter.patch"
sums1=$(cat "$KTREE_TOP"/*/*.patch | sha256sum)
sleep 1
"$kt" export >/dev/null
ktap_expect "exporting again gives byte-identical files" "$sums1" "$(cat "$KTREE_TOP"/*/*.patch | sha256sum)"
ktap_check "apply is a no-op when tree and series agree" bash -c "$kt apply | grep -q 'matches the series (3 patches)'"

echo "int dirty;" >> "$tree/kernel/a.c"
ktap_check "apply refuses uncommitted changes" bash -c "! $kt apply 2>/dev/null"
git -C "$tree" checkout -q -- .
commit kernel/a.c "int x4;" "kernel: unexported"
ktap_check "apply refuses commits that are not in the series" bash -c "! $kt apply 2>/dev/null && $kt apply 2>&1 | grep -q 'unexported'"
ktap_check "the unexported commit is still there" bash -c "git -C $tree log -1 --format=%s | grep -q unexported"
git -C "$tree" reset -q --hard HEAD~1

want=$(git -C "$tree" rev-parse 'HEAD^{tree}')
rm -rf "$tree"
ktap_check "a fresh tree applies the series" "$kt" apply
ktap_expect "the fresh tree equals the exported one" "$want" "$(git -C "$tree" rev-parse 'HEAD^{tree}')"
# A changed series re-applies from the first differing patch.
sed -i 's/int x3;/int x3b;/' "$KTREE_TOP"/kernel-patches/0002-*.patch
ktap_check "a changed series is re-applied" bash -c "$kt apply | grep -q 'applying 2 of 3' && grep -q x3b $tree/kernel/a.c"
ktap_finished
