# Dumps the records of a Determined Helm chart install without touching its volume: checks
# that the chart's database is down (its claim is ReadWriteOnce, and a running server's files
# are not a consistent copy), copies the data directory from the read-only claim to $WORK,
# starts PostgreSQL of the data's major version on the copy (local socket only), dumps the
# chart's database to $WORK/restore.dump for db_restore.sh, and stops. POSIX sh (dash).
set -eu
umask 077
data="$CHART_VOLUME/$CHART_DATA_DIR"
fail() { echo "$1" >&2; exit 1; }

[ -f "$data/PG_VERSION" ] || fail "no PostgreSQL data directory at $CHART_DATA_DIR on claim $CHART_CLAIM"
major=$(cat "$data/PG_VERSION")
ours=$(postgres --version | sed 's/^[^0-9]*\([0-9]*\).*/\1/')
[ "$major" = "$ours" ] || fail "the chart's data is PostgreSQL $major and this Job runs PostgreSQL $ours: set database.fromHelmChart.image to a postgres:$major image"

status=0
pg_isready --quiet --host="$CHART_SERVICE" --port="$CHART_PORT" --timeout=5 || status=$?
case "$status" in
  0 | 1) fail "refusing: the chart's database still answers at $CHART_SERVICE; scale its Deployment to 0 first (kubectl scale deployment --replicas=0, see the README)" ;;
esac

copy="$WORK/pgdata"
[ ! -d "$copy" ] || chmod -R u+w "$copy"
rm -rf "$copy" "$WORK/run"
cp -R -p "$data" "$copy"
chmod -R u+w "$copy"
chmod 700 "$copy"
# Left by a server that was stopped without a clean shutdown; PostgreSQL recovers the copy.
rm -f "$copy/postmaster.pid"
mkdir -p "$WORK/run"
printf 'local all all trust\n' > "$WORK/pg_hba.conf"
echo "copied $(du -s -k "$copy" | cut -f1) KiB of PostgreSQL $major data; starting it"
if ! pg_ctl --pgdata="$copy" --log="$WORK/server.log" --wait --timeout=600 \
  --options="-c listen_addresses='' -c port=5432 -c unix_socket_directories='$WORK/run' -c hba_file='$WORK/pg_hba.conf'" start; then
  cat "$WORK/server.log" >&2
  exit 1
fi
pg_dump --host="$WORK/run" --port=5432 --username="$CHART_USER" --dbname="$CHART_DATABASE" --format=custom \
  --file="$WORK/restore.dump.partial"
pg_ctl --pgdata="$copy" --wait --mode=fast stop
mv "$WORK/restore.dump.partial" "$WORK/restore.dump"
rm -rf "$copy"
echo "dumped database $CHART_DATABASE of the chart: $(wc -c < "$WORK/restore.dump") bytes"
