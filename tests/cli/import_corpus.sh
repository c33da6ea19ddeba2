#!/bin/sh
# import_corpus.sh SIMTRAIN [--print]: every file of tests/corpus/ imports, or is refused with
# its exact message (tests/corpus/expected.tsv, one row per import). For each row:
# - `simtrain import KIND FILE ...` exits 0 and writes a scenario, or exits 1 with the row's
#   message as the first line of its diagnostics;
# - an imported scenario, written to the same relative path under a scratch folder, gives
#   `simtrain memory` the same bytes on standard output and the same exit status as
#   `simtrain memory --from KIND FILE ...` (the report names the path; both name FILE), and
#   that report has a breakdown and a verdict; diagnostics agree but for the name of the text
#   they point into (the file, or `<imported from FILE>`); the run command agrees the same way
#   on the rows marked `run`;
# - with --strict the first diagnostic is the row's strict column, or it imports (ok).
# Every corpus file is in the table but the manifests, licences and READMEs. With --print the
# outcomes are printed as table rows instead of checked (to review a change). POSIX sh; runs
# from the repository root; the suite runs it under the sanitizer build too.
set -u
bin=${1:?usage: tests/cli/import_corpus.sh SIMTRAIN [--print]}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
print=${2:-}
root=$PWD
corpus=$root/tests/corpus
table=$corpus/expected.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tab=$(printf '\t')
failures=0
rows=0

fail() {
    echo "FAIL $*"
    failures=$((failures + 1))
}

# the arguments of a row after the file: --model-config, --hardware, --gpus and the extras
args() {
    out=""
    [ "$model" != - ] && out="$out --model-config $model"
    [ "$hw" != - ] && out="$out --hardware $hw"
    [ "$gpus" != - ] && out="$out --gpus $gpus"
    [ "$extra" != - ] && out="$out $extra"
    printf '%s' "$out"
}

check_row() {
    a=$(args)
    mkdir -p "$tmp/$dir/$(dirname "$file")"
    out=$tmp/$dir/$file.yaml
    # shellcheck disable=SC2086 # the arguments split at spaces by design
    (cd "$corpus/$dir" && "$bin" import "$kind" "$file" $a -o "$out") 2>"$tmp/err"
    rc=$?
    got=$(head -n 1 "$tmp/err")
    (cd "$corpus/$dir" && "$bin" import "$kind" "$file" $a --strict -o "$tmp/strict.yaml") \
        2>"$tmp/serr"
    src=$?
    sgot=$(head -n 1 "$tmp/serr")
    [ $src -eq 0 ] && sgot=ok
    [ $rc -eq 0 ] && result=ok || result=$got
    if [ -n "$print" ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$dir" "$file" "$kind" "$model" "$hw" \
            "$gpus" "$extra" "$result" "$sgot" "$run"
        return
    fi
    if [ "$result" != "$expect" ]; then
        fail "$dir/$file: import gave '$result', expected '$expect'"
        return
    fi
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "$dir/$file: import exited with status $rc"
    [ "$sgot" = "$strict" ] || fail "$dir/$file: --strict gave '$sgot', expected '$strict'"
    [ $rc -eq 0 ] || return
    # the written scenario and --from, same relative path: the same bytes
    mkdir -p "$tmp/w/$dir/$(dirname "$file")"
    cp "$out" "$tmp/w/$dir/$file"
    same "memory" memory --no-what-if || return
    grep -q '^Memory per GPU at the peak' "$tmp/from.txt" &&
        grep -q '^Fits: \|^Does NOT fit: ' "$tmp/from.txt" ||
        fail "$dir/$file: memory printed no breakdown or verdict"
    [ "$run" = run ] || return
    same "the run" ""
}

# same WHAT CMD [OPTIONS]: CMD on the written scenario and with --from agree (stdout byte for
# byte, the exit status, stderr but for the text's name); CMD "" is the run command
same() {
    what=$1
    cmd=$2
    shift 2
    # shellcheck disable=SC2086 # $cmd is empty for the run command
    (cd "$tmp/w/$dir" && "$bin" $cmd "$file" "$@") >"$tmp/file.txt" 2>"$tmp/file.err"
    frc=$?
    (cd "$corpus/$dir" && "$bin" $cmd --from "$kind" "$file" $a "$@") >"$tmp/from.txt" \
        2>"$tmp/from.err"
    mrc=$?
    sed "s|^<imported from $file>:|$file:|; /^note: the scenario above was imported from /d" \
        "$tmp/from.err" >"$tmp/from.err2"
    if [ $frc -ne $mrc ] || ! cmp -s "$tmp/file.txt" "$tmp/from.txt" ||
        ! cmp -s "$tmp/file.err" "$tmp/from.err2"; then
        fail "$dir/$file: $what on the written scenario (status $frc) differs from --from ($mrc)"
        diff "$tmp/file.txt" "$tmp/from.txt" | head -10
        diff "$tmp/file.err" "$tmp/from.err2" | head -10
        return 1
    fi
    [ $mrc -eq 0 ] || [ $mrc -eq 3 ] || { fail "$dir/$file: $what exited with status $mrc"; return 1; }
    return 0
}

while IFS="$tab" read -r dir file kind model hw gpus extra expect strict run; do
    case $dir in '#'* | '') continue ;; esac
    echo "$dir/$file" >>"$tmp/listed"
    if [ "$kind" = - ]; then # a corpus file that is no config (a README)
        [ -n "$print" ] && printf '%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\n' "$dir" "$file"
        continue
    fi
    rows=$((rows + 1))
    check_row
done <"$table"

# every corpus file is in the table, but the metadata
(cd "$corpus" && find . -type f ! -name LICENSE ! -name 'LICENSE.*' ! -name MANIFEST.tsv \
    ! -path ./README.md ! -name expected.tsv | sed 's|^\./||' | LC_ALL=C sort) >"$tmp/files"
sed '/^\.\.\/fixtures\//d' "$tmp/listed" | LC_ALL=C sort -u >"$tmp/seen"
missing=$(LC_ALL=C comm -23 "$tmp/files" "$tmp/seen")
[ -z "$missing" ] || fail "corpus files not in tests/corpus/expected.tsv: $missing"
[ -n "$print" ] && exit 0
echo "import_corpus: $rows imports, $failures failures"
[ "$failures" -eq 0 ]
