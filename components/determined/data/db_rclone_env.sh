# The checkpoint store's credentials from their Secret's files, one per variable (rclone's
# settings): in this shell's environment only, never the pod's or argv.
for file in "${STORAGE_CREDENTIALS_DIR:-/etc/determined-storage-credentials}"/*; do
  [ -f "$file" ] || continue
  export "$(basename "$file")=$(cat "$file")"
done
# An Azure credential is an account key or a SAS token (query parameters with a signature),
# told apart as the Azure SDKs (and so Determined's tasks) tell them apart; rclone takes the
# one as `key`, the other inside a SAS URL.
if [ -n "${AZURE_CREDENTIAL:-}" ]; then
  case "$AZURE_CREDENTIAL" in
    *sig=*)
      RCLONE_CONFIG_BACKUP_SAS_URL="$AZURE_ACCOUNT_URL?${AZURE_CREDENTIAL#\?}"
      export RCLONE_CONFIG_BACKUP_SAS_URL
      ;;
    *)
      RCLONE_CONFIG_BACKUP_KEY="$AZURE_CREDENTIAL"
      export RCLONE_CONFIG_BACKUP_KEY
      ;;
  esac
fi
