#!/bin/sh
# Docs are tests. From a fresh copy of the repository (the data directories, docs/, README.md,
# tests/corpus/, and the binary under test where a build puts it, build/simtrain):
#  1. every ```sh block of each lab (docs/labs/NN-*.md) runs, in order, as one `set -e` script
#     from the copy's root, exactly as printed: the lab itself puts `simtrain` on PATH, and marks
#     every command that exits 3 ("does not fit": the report is still printed) with
#     `|| test $? -eq 3`; an unmarked non-zero exit stops the script and fails the lab;
#  2. nothing it prints says `command not found` or `error:`, except the does-not-fit verdict of
#     the commands marked to exit 3;
#  3. every figure the lab's text quotes with a marker after it, `9.74 s<!--fig KEY @N TOL-->`,
#     is what the commands print: the first number after KEY on the N-th output line holding KEY
#     (N defaults to 1; spaces in the output count as one; a KEY that starts with ^ must start
#     the line), within TOL (`2%` relative, or `0.05` absolute in the figure's unit;
#     s/ms/us/ns and B/KiB/MiB/GiB/TiB convert);
#  4. the README's ```sh blocks run the same way (not the two marked `<!-- command-N -->`: they
#     install, build and run the whole suite), and each transcript block (```, first line
#     `$ COMMAND`) matches what COMMAND prints: every line, in order, with the same words and
#     every number within 1 % (a `...` line stands for lines left out);
#  5. where gnuplot is installed, every picture a lab names (out/...png) exists.
# Modes: --figures prints every quoted figure beside what the commands print; --update rewrites
# the quoted figures and the README's transcripts in place from what the commands print (after a
# deliberate model change; review the diff). Run from the repository root:
#   tests/cli/labs.sh [--figures | --update] path/to/simtrain
set -u
mode=check
case ${1:-} in
--figures) mode=figures; shift ;;
--update) mode=update; shift ;;
esac
bin=${1:?usage: tests/cli/labs.sh [--figures | --update] SIMTRAIN}
case $bin in /*) ;; *) bin="$(pwd)/$bin" ;; esac
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo="$tmp/repo"
mkdir -p "$repo/build" "$repo/tests"
for d in scenarios hardware workloads frameworks plots docs README.md; do cp -R "$root/$d" "$repo/"; done
cp -R "$root/tests/corpus" "$repo/tests/"
ln -s "$bin" "$repo/build/simtrain"
unset SIMTRAIN_DATA
# No `simtrain` on the PATH but the one a lab puts there.
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | while read -r d; do
    [ -n "$d" ] && [ ! -x "$d/simtrain" ] && printf '%s:' "$d"
done)
PATH=${PATH%:}
export PATH
failures=0
labs=0
figures=0

# The ```sh blocks of a Markdown file, in order, but those just after a `<!-- command-N -->`.
sh_blocks() {
    awk '/^<!-- command-[0-9]+ -->/ { skip = 1; next }
         /^```sh$/ { on = !skip; skip = 0; next }
         /^```/ { on = 0; next }
         /[^ ]/ { skip = 0 }
         on' "$1"
}

# Runs the ```sh blocks of $1 (named $2) from the copy's root; output in $tmp/$2.out.
run_blocks() {
    { echo 'set -e'; sh_blocks "$1"; } >"$tmp/$2.sh"
    if ! (cd "$repo" && sh "$tmp/$2.sh" >"$tmp/$2.out" 2>&1); then
        printf 'FAIL %s: a command exited non-zero and the lab does not say it does (`|| test $? -eq 3`):\n' "$2"
        tail -n 5 "$tmp/$2.out"
        return 1
    fi
    if grep -n -e 'command not found' -e ': not found' "$tmp/$2.out"; then
        printf 'FAIL %s: a command is not found\n' "$2"
        return 1
    fi
    if grep 'error:' "$tmp/$2.out" | grep -v 'does not fit'; then
        printf 'FAIL %s: a command printed an error\n' "$2"
        return 1
    fi
}

# The quoted figures of $1 against the output $2: prints one line per figure
# (status, quoted, printed, tolerance, key); with $3 = update, writes the rewritten text to $4.
check_figures() {
    awk -v outfile="$2" -v mode="$3" -v newfile="$4" -v lab="$5" '
    function scale(u) {
        if (u == "ns") return 1e-9; if (u == "us") return 1e-6; if (u == "ms") return 1e-3
        if (u == "s") return 1; if (u == "B") return 1; if (u == "KiB") return 1024
        if (u == "MiB") return 1048576; if (u == "GiB") return 1073741824
        if (u == "TiB") return 1099511627776
        return 0
    }
    function num(s) { gsub(/,/, "", s); return s + 0 }
    function abs(x) { return x < 0 ? -x : x }
    BEGIN { n = 0; while ((getline l < outfile) > 0) { gsub(/[ \t]+/, " ", l); out[++n] = l }; bad = 0 }
    {
        line = $0; done = ""
        while (match(line, /<!--fig [^>]*-->/)) {
            spec = substr(line, RSTART + 8, RLENGTH - 11); before = substr(line, 1, RSTART - 1)
            after = substr(line, RSTART + RLENGTH); marker = substr(line, RSTART, RLENGTH)
            k = split(spec, w, " "); tol = w[k]; occ = 1; last = k - 1
            if (w[last] ~ /^@[0-9]+$/) { occ = substr(w[last], 2) + 0; last-- }
            key = w[1]; for (i = 2; i <= last; i++) key = key " " w[i]
            anchored = sub(/^\^/, "", key)
            if (!match(before, /[0-9][0-9,]*(\.[0-9]+)?( ?[A-Za-z%\/]+)?$/)) {
                printf "BAD  %s: no figure before <!--fig %s-->\n", lab, spec; bad = 1
                done = done before marker; line = after; continue
            }
            quoted = substr(before, RSTART); head = substr(before, 1, RSTART - 1)
            match(quoted, /^[0-9][0-9,]*(\.[0-9]+)?/); qn = substr(quoted, 1, RLENGTH)
            qu = substr(quoted, RLENGTH + 1); sp = (qu ~ /^ /) ? " " : ""; sub(/^ /, "", qu)
            seen = 0; found = ""
            for (j = 1; j <= n && found == ""; j++) {
                p = index(out[j], key)
                if (p && (!anchored || p == 1) && ++seen == occ) {
                    rest = substr(out[j], p + length(key))
                    if (match(rest, /[0-9][0-9,]*(\.[0-9]+)?( ?[A-Za-z%\/]+)?/)) found = substr(rest, RSTART, RLENGTH)
                    else found = "?"
                }
            }
            status = "ok"; printed = found
            if (found == "" || found == "?") { status = "FAIL"; printed = "(no \"" key "\" @" occ ")" }
            else {
                match(found, /^[0-9][0-9,]*(\.[0-9]+)?/); on = substr(found, 1, RLENGTH)
                ou = substr(found, RLENGTH + 1); sub(/^ /, "", ou)
                q = num(qn); m = num(on)
                if (scale(qu) && scale(ou)) { q *= scale(qu) / scale(ou) }
                else if (qu != ou) status = "FAIL"
                if (tol ~ /%$/) limit = (substr(tol, 1, length(tol) - 1) / 100) * abs(m)
                else limit = tol * (scale(qu) && scale(ou) ? scale(qu) / scale(ou) : 1)
                if (abs(q - m) > limit * 1.000001 + 1e-12) status = "FAIL"
                if (mode == "update") quoted = on sp ou
            }
            if (status == "FAIL") bad = 1
            printf "%-4s %s: quoted %s, printed %s (within %s, \"%s\" @%d)\n", status, lab, qn (qu == "" ? "" : sp qu), printed, tol, key, occ
            done = done head quoted marker; line = after
        }
        if (mode == "update") print done line > newfile
    }
    END { exit bad }' "$1"
}

for lab in "$root"/docs/labs/[0-9]*.md; do
    name=$(basename "$lab" .md)
    labs=$((labs + 1))
    run_blocks "$lab" "$name" || { failures=$((failures + 1)); continue; }
    figs=$(grep -o "<!--fig " "$lab" | wc -l)
    figures=$((figures + figs))
    if [ "$figs" -gt 0 ]; then
        check_figures "$lab" "$tmp/$name.out" "$mode" "$tmp/$name.new" "$name" >"$tmp/$name.figs"
        st=$?
        case $mode in
        figures) cat "$tmp/$name.figs" ;;
        update) cmp -s "$lab" "$tmp/$name.new" || { cp "$tmp/$name.new" "$lab"; echo "updated $lab"; } ;;
        *) [ $st -eq 0 ] || { grep -v '^ok' "$tmp/$name.figs"; failures=$((failures + 1)); } ;;
        esac
    fi
    if command -v gnuplot >/dev/null 2>&1; then
        for png in $(grep -o 'out/[A-Za-z0-9_./-]*\.png' "$lab" | sort -u); do
            [ -s "$repo/$png" ] || {
                printf 'FAIL %s: no %s\n' "$name" "$png"
                failures=$((failures + 1))
            }
        done
    fi
done

# The README: its runnable examples, then its transcripts.
run_blocks "$root/README.md" README || failures=$((failures + 1))
awk -v dir="$tmp" '
    /^```/ { if (!fence) { fence = 1; plain = ($0 == "```"); first = 1 } else { fence = 0; tr = 0 }; next }
    fence && plain && first { first = 0; if ($0 ~ /^\$ /) { t++; tr = 1; print substr($0, 3) > (dir "/t" t ".cmd") }; next }
    fence && tr { print > (dir "/t" t ".want") }' "$root/README.md"
for cmd in "$tmp"/t*.cmd; do
    [ -e "$cmd" ] || continue
    t=${cmd%.cmd}
    (cd "$repo" && sh -e "$cmd" >"$t.got" 2>&1)
    # Lines of want, in order, each matched by a later line of got (same words, numbers within 1 %).
    awk -v got="$t.got" -v mode="$mode" -v new="$t.new" '
    function skel(s) { gsub(/[0-9]+(\.[0-9]+)?/, "#", s); gsub(/[ \t]+/, " ", s); return s }
    function same(a, b,   na, nb, x, y, i) {
        if (skel(a) != skel(b)) return 0
        na = split(a, x, /[^0-9.]+/); nb = split(b, y, /[^0-9.]+/)
        for (i = 1; i <= na; i++)
            if (x[i] ~ /^[0-9]/ && (x[i] - y[i] > 0.01 * y[i] + 1e-9 || y[i] - x[i] > 0.01 * y[i] + 1e-9)) return 0
        return 1
    }
    BEGIN { n = 0; while ((getline l < got) > 0) g[++n] = l; j = 1; bad = 0; seg = 0 }
    {
        if ($0 == "...") { flush(); print "..." > new; next }
        if (!seg) { seg = 1; s0 = 0 }
        k = j; while (k <= n && skel(g[k]) != skel($0)) k++
        if (k > n) { printf "FAIL README transcript line not printed: %s\n", $0; bad = 1; seglast = -1; pend[++np] = $0; next }
        if (!same($0, g[k])) { printf "FAIL README transcript: %s\n          printed: %s\n", $0, g[k]; bad = 1 }
        if (!s0) s0 = k
        seglast = k; pend[++np] = $0; j = k + 1
    }
    function flush(  i) {
        if (!np) return
        if (s0 && seglast > 0) for (i = s0; i <= seglast; i++) print g[i] > new
        else for (i = 1; i <= np; i++) print pend[i] > new
        np = 0; seg = 0; s0 = 0
    }
    END { flush(); exit bad }' "$t.want" || [ "$mode" = update ] || failures=$((failures + 1))
done
if [ "$mode" = update ] && [ -e "$tmp/t1.cmd" ]; then
    # Splice every regenerated transcript back in place of its block.
    awk -v dir="$tmp" '
        /^```/ { if (!fence) { fence = 1; plain = ($0 == "```"); first = 1 } else { fence = 0; tr = 0 }; print; next }
        fence && plain && first { first = 0; print; if ($0 ~ /^\$ /) { t++; tr = 1; f = dir "/t" t ".new"; while ((getline l < f) > 0) print l }; next }
        fence && tr { next }
        { print }' "$root/README.md" >"$tmp/README.new"
    cmp -s "$root/README.md" "$tmp/README.new" || { cp "$tmp/README.new" "$root/README.md"; echo "updated README.md"; }
fi

echo "labs: $labs labs, $figures quoted figures, $failures failures"
[ "$labs" -ge 8 ] && [ "$figures" -ge 20 ] && [ "$failures" -eq 0 ]
