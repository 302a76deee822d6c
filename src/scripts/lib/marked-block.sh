# shellcheck shell=sh
# A marked block of ours at the end of a configuration file of PostgreSQL's (postgresql.conf,
# pg_hba_custom.conf): the block between its BEGIN and END lines is replaced, never added twice,
# and every other line of the file is kept as it is. Only sh, coreutils and sed: the image's
# openSUSE postgres base lists coreutils, findutils, sed and util-linux, not gawk or diffutils
# (SUSE/BCI-dockerfile-generator src/bci_build/package/postgres.py @ 0126875b), hence sed, not
# awk, and sha1sum, not cmp. The marker lines must not hold `|` (sed's delimiter here).

# write_marked_block FILE BEGIN END BODY: FILE without the lines from BEGIN to END (wherever they
# are), then BEGIN, BODY (lines) and END at its end. Prints `unchanged` when FILE already was so
# (nothing written), `changed` when it wrote over FILE (its owner and mode stay), `created` when
# FILE was missing (made with the umask's mode, owned by the caller: set them after). Returns
# non-zero, having written nothing, when it cannot read FILE or make the new text.
write_marked_block() {
  wmb_new=$(mktemp) || return 1
  if [ -f "$1" ]; then
    sed -e "\\|^$2\$|,\\|^$3\$|d" "$1" > "$wmb_new" || { rm -f "$wmb_new"; return 1; }
  fi
  printf '%s\n' "$2" "$4" "$3" >> "$wmb_new" || { rm -f "$wmb_new"; return 1; }
  if [ ! -f "$1" ]; then
    wmb_state=created
  elif [ "$(sha1sum < "$wmb_new")" = "$(sha1sum < "$1")" ]; then
    rm -f "$wmb_new"
    echo unchanged
    return 0
  else
    wmb_state=changed
  fi
  # Over the old file, not a rename: its owner and mode stay.
  if ! cat "$wmb_new" > "$1"; then
    rm -f "$wmb_new"
    return 1
  fi
  rm -f "$wmb_new"
  echo "$wmb_state"
}
