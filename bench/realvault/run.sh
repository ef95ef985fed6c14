#!/bin/sh
# Run the real-vault eval cases: bench/realvault/run.sh VAULTS_DIR
# VAULTS_DIR holds one folder per language (en, zh, ja, ko), each a copy of that language's
# folder of Obsidian's help vault (see README.md). Prints one line a language and the cases
# whose target is not first; the JSON of each run is left in $OUT (default: a temporary folder).
set -eu
vaults=${1:?usage: run.sh VAULTS_DIR}
here=$(dirname "$0")
out=${OUT:-$(mktemp -d)}
for lang in en zh ja ko; do
    [ -d "$vaults/$lang" ] || continue
    notedex eval "$here/$lang-cases.json" --vault "$vaults/$lang" --db "$out/$lang.db" --json \
        > "$out/$lang.json" || true
done
python3 "$here/summary.py" "$out"/en.json "$out"/zh.json "$out"/ja.json "$out"/ko.json 2>/dev/null \
    || python3 "$here/summary.py" "$out"/*.json
