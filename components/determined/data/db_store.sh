# Stores the dump db_dump.sh left in $WORK/$POD_NAME at $DEST (an rclone remote path, or the
# backups claim's directory) as determined-<UTC time>.dump, or before an upgrade
# ($MASTER_VERSION set) determined-<UTC time>-upgrade-<from>-to-<to>.dump, <from> being
# what the previous upgrade dump recorded in $DEST/$MARKER. With $KEEP_DAYS, then deletes
# dumps older than that (never the one just stored). POSIX sh (the rclone image's busybox).
set -eu
work="$WORK/${POD_NAME:?}"
if [ -e "$work/empty" ]; then
  echo "nothing to store"
else
  stamp=$(cat "$work/stamp")
  if [ -n "${MASTER_VERSION:-}" ]; then
    from=$(rclone cat "$DEST/$MARKER" 2>/dev/null | head -n 1 | tr -cd '0-9.') || from=""
    name="determined-$stamp-upgrade-${from:-unknown}-to-$MASTER_VERSION.dump"
  else
    name="determined-$stamp.dump"
  fi
  rclone moveto "$work/dump" "$DEST/$name"
  echo "stored $name"
fi
if [ -n "${MASTER_VERSION:-}" ]; then
  printf '%s\n' "$MASTER_VERSION" | rclone rcat "$DEST/$MARKER"
fi
rm -rf "$work"
if [ -n "${KEEP_DAYS:-}" ]; then
  rclone delete --min-age "${KEEP_DAYS}d" --include "/determined-*.dump" "$DEST"
  case "$DEST" in
    # Work directories of pods that died before storing their dump.
    /*) find "$WORK" -mindepth 1 -maxdepth 1 -type d -mmin +1440 -exec rm -rf {} + ;;
  esac
fi
echo "newest dumps:"
rclone lsf --include "/determined-*.dump" "$DEST" | sort | tail -n 5
