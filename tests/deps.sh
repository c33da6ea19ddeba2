#!/bin/sh
# deps.sh [SRC] - check the dependency rule of src/ (docs/design.md, "Dependencies") on every
# `#include "..."` of every .c, .h and .cu file under SRC (default: the src/ beside tests/).
# POSIX sh and awk only. Prints each violation as `file:line: error: ...` and exits 1; prints
# one summary line and exits 0 when there is none.
#
# The rule:
# 1. Only folders sit at the top of src/, and each is in the order below (or stands apart).
# 2. A folder includes only itself and the folders below it, lowest first:
#      base < model < net < prog < strategy < engine < run < report < config < fit < whatif
#      < import < serve < cli
#    config/, the YAML front end, sits above the simulation it feeds: model/ holds the typed
#    structs it fills, and strategy/ .. report/ run from those without the loader; only the
#    commands that read files (fit/, whatif/, cli/) include it. import/ translates the configs
#    of other tools into scenario text for cli/ (import and --from) alone. serve/, the HTTP
#    server and the page, calls the stages the commands call, for cli/ (serve and --html).
#    An include names its folder ("model/workload.h"); only kernels/ includes bare names.
# 3. mpi/, http/ and kernels/ stand apart: they include only themselves, nothing includes
#    kernels/, only whatif/mpi_sweep.c includes mpi/mpi_module.h and only serve/serve.c
#    includes http/http_module.h (the modules they load).
# 4. A header whose name ends in _internal.h is private to its folder.
# 5. No cycles between modules. A module is one concern's files in one folder: x.h, its
#    private x_internal.h, x.c and the x_*.c files that implement it (when no x_*.h of their
#    own exists: estimate_time.c belongs to estimate.h). An include from a file of module A of
#    a header of module B is an edge A -> B; a cycle of such edges is a call or include cycle
#    between files (every cycle of header includes is one too). Edges inside a module are not
#    checked: its files are one unit. An include that breaks rule 2 or 3 is reported there and
#    left out of the graph, so the cycles reported are those the order alone cannot catch:
#    between the files of one folder.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-$here/../src}
[ -d "$src" ] || { echo "deps.sh: no such directory: $src" >&2; exit 2; }
src=$(cd "$src" && pwd)
list=$(mktemp)
trap 'rm -f "$list"' EXIT
(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sed 's|^\./||' |
    LC_ALL=C sort) >"$list"
[ -s "$list" ] || { echo "deps.sh: no sources under $src" >&2; exit 2; }

cd "$src"
# shellcheck disable=SC2046 # one file name per line, none with spaces (rule 1 checks names)
LC_ALL=C awk -v order="base model net prog strategy engine run report config fit whatif import serve cli" \
    -v apart="mpi http kernels" -v sq="'" -v allowed="whatif/mpi_sweep.c:mpi/mpi_module.h serve/serve.c:http/http_module.h" '
function folder(p) { return index(p, "/") ? substr(p, 1, index(p, "/") - 1) : "" }
function base(p,   b) { b = p; sub(/.*\//, "", b); return b }
function stem(p,   s) { s = base(p); sub(/\.[^.]*$/, "", s); sub(/_internal$/, "", s); return s }
function bad(file, line, msg) { printf "%s:%d: error: %s\n", file, line, msg; nbad++ }
# The module of a file (rule 5): folder/stem, or for x_y.c without x_y.h the longest header
# stem x such that the file is x_...
function module(p,   d, s, best, h, rest) {
    d = folder(p); s = stem(p)
    if (p ~ /\.h$/ || (d "/" s) in hdr) return d "/" s
    best = ""
    for (h in hdr)
        if (folder(h) == d) {
            rest = substr(h, length(d) + 2)
            if (index(s, rest "_") == 1 && length(rest) > length(best)) best = rest
        }
    return best != "" ? d "/" best : d "/" s
}
# Depth-first search for cycles; a back edge closes the cycle path[k .. depth].
function dfs(u,   i, n, e, v, k, cyc) {
    color[u] = 1; path[++depth] = u
    n = split(adj[u], e, " ")
    for (i = 1; i <= n; i++) {
        v = e[i]
        if (color[v] == 1) {
            for (k = depth; path[k] != v; k--) ;
            cyc = ""
            for (; k <= depth; k++) cyc = cyc path[k] " -> "
            bad(why[u SUBSEP v], whyline[u SUBSEP v], "include cycle between modules: " cyc v)
        } else if (color[v] == 0) {
            dfs(v)
        }
    }
    depth--; color[u] = 2
}
BEGIN {
    n = split(order, o, " "); for (i = 1; i <= n; i++) rank[o[i]] = i
    n = split(apart, a, " "); for (i = 1; i <= n; i++) standalone[a[i]] = 1
    n = split(allowed, a, " "); for (i = 1; i <= n; i++) allow[a[i]] = 1
}
FNR == NR {
    files[++nfiles] = $0; exists[$0] = 1
    if ($0 ~ /\.h$/) hdr[folder($0) "/" stem($0)] = 1
    next
}
FNR == 1 {
    f = FILENAME; d = folder(f)
    if (d == "")
        bad(f, 1, "only folders sit at the top of src/ (move it into the folder of its stage)")
    else if (!(d in rank) && !(d in standalone))
        bad(f, 1, "folder " sq d "/" sq " is in neither the include order nor the folders apart (tests/deps.sh)")
    me = module(f)
    if (!(me in seen)) { seen[me] = 1; nodes[++nnodes] = me }
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
    if (index(inc, "/") == 0) {
        if (d != "kernels") { bad(f, FNR, "include \"" inc "\" must name its folder (\"" d "/" inc "\")"); next }
        inc = d "/" inc
    }
    t = folder(inc)
    if (!(inc in exists)) { bad(f, FNR, "include \"" inc "\" names no file under src/"); next }
    if (t != d) {
        if ((f ":" inc) in allow) {
        } else if (d in standalone) {
            bad(f, FNR, d "/ stands apart and includes nothing outside itself: \"" inc "\""); next
        } else if (t in standalone) {
            bad(f, FNR, t "/ stands apart: \"" inc "\" may not be included from " d "/"); next
        } else if ((t in rank) && (d in rank) && rank[t] > rank[d]) {
            bad(f, FNR, d "/ may not include " t "/, which is above it in the include order (\"" inc "\")"); next
        }
        if (base(inc) ~ /_internal\.h$/)
            bad(f, FNR, "\"" inc "\" is private to " t "/")
    }
    # An include that breaks the order is reported above and left out of the graph, so a
    # cycle below is one the order alone does not catch (inside a folder, or through mpi/).
    m = module(inc)
    if (m != me && !((me SUBSEP m) in edge)) {
        edge[me SUBSEP m] = 1; adj[me] = adj[me] " " m
        why[me SUBSEP m] = f; whyline[me SUBSEP m] = FNR
        if (!(m in seen)) { seen[m] = 1; nodes[++nnodes] = m }
    }
}
END {
    for (i = 1; i <= nnodes; i++) if (color[nodes[i]] == 0) dfs(nodes[i])
    if (nbad) {
        printf "deps.sh: %d violation%s of the include rule (tests/deps.sh; docs/design.md)\n", nbad, nbad == 1 ? "" : "s"
        printf "deps.sh: include order, lowest first: %s; apart: %s\n", order, apart
        exit 1
    }
    printf "deps.sh: %d files, %d modules, include order and cycles ok\n", nfiles, nnodes
}' "$list" $(cat "$list")
