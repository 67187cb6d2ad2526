# Copies the dump $BACKUP from $SOURCE (an rclone remote path) to $WORK/restore.dump for
# db_restore.sh. POSIX sh (the rclone image's busybox).
set -eu
rclone copyto "$SOURCE/$BACKUP" "$WORK/restore.dump"
echo "fetched $BACKUP: $(wc -c < "$WORK/restore.dump") bytes"
