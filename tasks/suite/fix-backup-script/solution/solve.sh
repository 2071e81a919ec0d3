#!/bin/bash
set -euo pipefail
cd /app
cat > /app/backup.sh <<'EOF'
#!/bin/bash
# Usage: backup.sh SRC DEST
# Copies every file directly in directory SRC whose name ends in .txt into directory DEST
# (created if it does not exist yet), adding .bak to each copy's name: SRC/notes.txt becomes
# DEST/notes.txt.bak. Then prints how many files it copied, as "N files backed up".
# If SRC or DEST is missing, or SRC is not a directory: prints a usage line to stderr and
# exits with status 2. File names may contain spaces.
SRC=$1
DEST=$2
if [ -z "$SRC" ] || [ -z "$DEST" ] || [ ! -d "$SRC" ]; then
  echo "usage: backup.sh SRC DEST" >&2
  exit 2
fi
mkdir -p "$DEST"
count=0
for f in "$SRC"/*.txt; do
  [ -f "$f" ] || continue
  cp "$f" "$DEST/$(basename "$f").bak"
  count=$((count+1))
done
echo "$count files backed up"
EOF
