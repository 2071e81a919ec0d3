#!/bin/bash
set -euo pipefail
cd /app
cat > /app/rotate.sh <<'EOF'
#!/bin/bash
# Rotates DIR/app.log into app.log.1 .. app.log.KEEP.
if [ $# -lt 2 ] || ! [[ $2 =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ]; then
  echo "usage: rotate.sh DIR KEEP (KEEP a positive integer)" >&2
  exit 2
fi
dir=$1 keep=$2
if [ ! -f "$dir/app.log" ]; then
  echo "rotate.sh: $dir/app.log does not exist" >&2
  exit 1
fi
rm -f "$dir/app.log.$keep"
for ((i = keep - 1; i >= 1; i--)); do
  if [ -e "$dir/app.log.$i" ]; then mv "$dir/app.log.$i" "$dir/app.log.$((i + 1))"; fi
done
mv "$dir/app.log" "$dir/app.log.1"
: > "$dir/app.log"
EOF
chmod +x /app/rotate.sh
