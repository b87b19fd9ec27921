# The end-to-end scripts' shared part, sourced first: `source "$(dirname "$0")/lib.sh" "$1"`.
# Sets BITSIFT (the binary, absolute: the scripts change directory), SOURCE_DIR (the
# checkout) and WORK (a fresh directory, physical, removed at exit), and the checks, which count passes and failures;
# `finish` prints the counts and exits 1 if any failed.
set -u
BITSIFT=$(realpath "$1")
[ -x "$BITSIFT" ] || { echo "not an executable: $1"; exit 2; }
SOURCE_DIR=$(realpath "$(dirname "$0")/../..")
WORK=$(realpath "$(mktemp -d)")  # printed paths are physical
trap 'chmod -R u+rwx "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
pass=0 fail=0

check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
has() {  # has NAME NEEDLE TEXT: TEXT holds NEEDLE (grep -F)
  if grep -qF -- "$2" <<<"$3"; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL %s\n  no %q in:\n%s\n' "$1" "$2" "$3"; fi
}
status() { "$@" >/dev/null 2>&1; echo $?; }  # the exit status of a command, its output dropped
lines() { printf '%s\n' "$@"; }              # one argument a line
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
