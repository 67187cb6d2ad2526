"""Writing a plan: only ever into a directory of its own, whole or not at all.

Everything is written into a fresh temporary directory next to `--out` (same file system),
checked for secrets, then moved into place in one rename. A failed or concurrent run leaves
the previous plan whole, and two plans into one `--out` never mix.

The plan recognises its own output by a marker file, `.determined-plan.json`, that lists
every file it wrote. An existing `--out` is replaced only when every file in it is listed
in its marker (or it is empty); a directory holding anything else is refused and left
untouched. The plan never deletes a file it did not write.

`--out` is taken as written, never through a symbolic link: a link anywhere on its path is
refused (as root, a link planted on the way would otherwise steer the plan's files
anywhere). A signal ends the run without a plan (plan.interrupts): the staging directory
goes with it, and the move into place is undone if the signal came while it was made. Each
staging directory is locked (flock) by the run that writes it, so the staging of a killed
run is told from a live one's and removed by the next run into the same `--out`.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from plan import interrupts
from plan.errors import PlanFailure, UsageError

MARKER = ".determined-plan.json"
FORMAT = 1

# Linux's limits on a path handed to the kernel: each name in it at most NAME_MAX bytes, the
# whole under PATH_MAX bytes (PATH_MAX counts the closing NUL); beyond them ENAMETOOLONG.
# Source: https://github.com/torvalds/linux/blob/master/include/uapi/linux/limits.h
# ("NAME_MAX 255 # chars in a file name", "PATH_MAX 4096 # chars in a path name including
# nul") and https://man7.org/linux/man-pages/man2/open.2.html (ENAMETOOLONG) (read 2026-11)
NAME_MAX = 255
PATH_MAX = 4096
# The staging directory beside `out` is named "." + out's name + ".plan-" + mkdtemp's
# 8 characters (the earlier plan moved aside: ".old-", one byte less): 15 bytes more.
STAGING_EXTRA = len(".") + len(".plan-") + 8


class OutputError(UsageError):
    pass


Writer = Callable[[Path], None]


def _read_marker(fd: int) -> set[str] | None:
    """The files the marker in the directory `fd` lists, or None without a valid marker."""
    try:
        marker = os.open(MARKER, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError:
        return None
    try:
        with os.fdopen(marker, "rb") as stream:
            content = json.loads(stream.read(1 << 22))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        return None
    files = content.get("files")
    if not isinstance(files, list):
        return None
    listed = set()
    for name in files:
        parts = name.split("/") if isinstance(name, str) else []
        if not parts or any(p in ("", ".", "..") for p in parts):
            return None  # not a marker the plan wrote
        listed.add(name)
    return listed | {MARKER}


def _first_entry(fd: int) -> str | None:
    """An entry of the directory `fd` to name when refusing it (a file before a directory),
    None when it is empty. Only the directory itself is read: `--out /` costs one listing."""
    with os.scandir(fd) as entries:
        found = sorted((entry.is_dir(follow_symlinks=False), entry.name) for entry in entries)
    return found[0][1] if found else None


def _foreign(fd: int, listed: set[str]) -> list[str]:
    """What the directory `fd` holds beyond the files `listed` (a marker's): a link is an
    entry of its own, never followed, and only the directories holding listed files are
    read (a foreign directory is named, never walked)."""
    # Directories are the plan's only as the parents of files it wrote.
    parents = {p.as_posix() for name in listed for p in Path(name).parents if p != Path(".")}
    files: list[str] = []
    dirs: list[str] = []
    for root, subdirs, names, root_fd in os.fwalk(".", dir_fd=fd):
        rel = Path(root)
        walked = []
        for name in subdirs:
            path = (rel / name).as_posix()
            if stat.S_ISLNK(os.stat(name, dir_fd=root_fd, follow_symlinks=False).st_mode):
                files.append(path)
            elif path in parents:
                walked.append(name)
            else:
                dirs.append(path)
        subdirs[:] = walked
        files.extend((rel / name).as_posix() for name in names)
    return sorted(name for name in files if name not in listed) + sorted(dirs)


def _inspect(fd: int, out: Path) -> set[str]:
    first = _first_entry(fd)
    listed: set[str] | None = set()
    foreign: list[str] = []
    if first is not None:
        listed = _read_marker(fd)
        foreign = [] if listed is None else _foreign(fd, listed)
    if listed is None or foreign:
        example = foreign[0] if foreign else first
        raise OutputError(
            f"--out {out} holds files the plan did not write ({example}); "
            "give a new or empty directory, or an earlier plan's"
        )
    if not os.access(".", os.W_OK | os.X_OK, dir_fd=fd):
        raise OutputError(f"--out {out} is not writable")
    return listed


def owned_files(out: Path, attempts: int = 20) -> set[str] | None:
    """What an existing `out` holds that the plan may replace: None when `out` does not
    exist, the marker's list otherwise. OutputError when `out` may not be replaced.

    The directory is read through one descriptor; if another run moved it away meanwhile
    (replacing an earlier plan), what was read is stale and `out` is read again."""
    for _ in range(attempts):
        if out.is_symlink():
            raise OutputError(f"--out {out} is a symbolic link; give the directory itself")
        try:
            fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            raise OutputError(_not_a_directory(out)) from None
        except OSError as exc:
            raise OutputError(f"--out {out} cannot be read ({exc.strerror})") from None
        try:
            seen = os.fstat(fd)
            try:
                return _inspect(fd, out)
            except OutputError:
                if _same(out, seen):
                    raise
            except FileNotFoundError:
                pass  # emptied while being read: read again
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise OutputError(f"--out {out} cannot be read ({reason})") from None
        finally:
            os.close(fd)
    raise OutputError(f"--out {out}: other runs kept replacing it; try again")


def _not_a_directory(out: Path) -> str:
    """Why `out` cannot be a directory: it is a file, or one of its parents is."""
    for path in [*reversed(out.parents), out]:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            break
        if not stat.S_ISDIR(mode):
            what = "a file, not a directory" if stat.S_ISREG(mode) else "not a directory"
            return f"--out {out} is {what}" if path == out else f"--out {out}: {path} is {what}"
    return f"--out {out}: a part of it is not a directory"


def _same(path: Path, seen: os.stat_result) -> bool:
    try:
        now = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (seen.st_dev, seen.st_ino)


def marker_files(directory: Path) -> set[str] | None:
    """The files the marker of `directory` lists (None: no marker the plan wrote)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return _read_marker(fd)
    finally:
        os.close(fd)


def check(out: Path) -> None:
    """Refuse an unusable `--out` before any work is done (OutputError)."""
    try:
        _check_lengths(out, physical(out))
        owned_files(out)  # an `out` below a file fails here
        parent = _existing_ancestor(out.parent)
        writable = os.access(parent, os.W_OK | os.X_OK)
    except OSError as exc:
        raise OutputError(f"--out {_shown(out)}: {exc.strerror or type(exc).__name__}") from None
    if not writable:
        raise OutputError(f"--out {out}: cannot write to {parent}")


def _shown(out: Path, limit: int = 60) -> str:
    text = str(out)
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-limit // 3 :]}"


def _check_lengths(out: Path, absolute: Path) -> None:
    """Refuse an `out` the kernel would refuse (ENAMETOOLONG) for the plan's own paths: its
    staging directory beside it, and the marker in that. `absolute` is `out` as the plan
    writes it (physical)."""
    for part in absolute.parts[1:]:
        if len(os.fsencode(part)) > NAME_MAX:
            raise OutputError(
                f"--out {_shown(out)}: a name in it is {len(os.fsencode(part))} bytes long; "
                f"the most a file name may have is {NAME_MAX} bytes"
            )
    name = len(os.fsencode(absolute.name))
    if name > NAME_MAX - STAGING_EXTRA:
        raise OutputError(
            f"--out {_shown(out)}: its name is {name} bytes long; it may have at most "
            f"{NAME_MAX - STAGING_EXTRA} (the plan writes into a directory beside it named "
            f"with {STAGING_EXTRA} bytes more, and a name may have {NAME_MAX})"
        )
    deepest = absolute.parent / f".{absolute.name}.plan-{'x' * 8}" / MARKER
    if len(os.fsencode(str(deepest))) >= PATH_MAX:
        room = PATH_MAX - 1 - (len(os.fsencode(str(deepest))) - len(os.fsencode(str(absolute))))
        raise OutputError(
            f"--out {_shown(out)} is {len(os.fsencode(str(absolute)))} bytes long as a full path; "
            f"the plan's files below it need it at most {room} (a path may have {PATH_MAX - 1} bytes)"
        )


def physical(out: Path) -> Path:
    """`out` as an absolute path, its parts taken as written (`..` goes up from where the
    path has got to, as the kernel takes it). OutputError if a part that exists is a
    symbolic link. The working directory is the kernel's own path, without links."""
    current = Path(out.anchor) if out.is_absolute() else Path(os.getcwd())
    parts = out.parts[1:] if out.is_absolute() else out.parts
    exists = True
    for index, part in enumerate(parts):
        current = current.parent if part == ".." else current / part
        if not exists:
            continue
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            exists = False  # made by the plan (or below a file: owned_files says so)
            continue
        if stat.S_ISLNK(mode):
            if index == len(parts) - 1:
                raise OutputError(f"--out {out} is a symbolic link; give the directory itself")
            raise OutputError(f"--out {out}: {current} is a symbolic link; give a path without links")
    return current


def _existing_ancestor(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _scan(directory: Path, files: Iterable[str], needles: set[str]) -> None:
    """Last line of defence: no stand-in or generated secret in any file (PlanFailure)."""
    pattern = re.compile("|".join(re.escape(n) for n in sorted(needles, key=len, reverse=True) if n))
    if not pattern.pattern:
        return
    for name in sorted(files):
        text = (directory / name).read_text()
        if pattern.search(text):
            raise PlanFailure(f"a secret value would be written to {name}; nothing was written")


def _discard(directory: Path, listed: set[str]) -> bool:
    """Delete the listed files of a directory moved aside, then its emptied directories.
    True when nothing is left."""
    root = directory.resolve()
    for name in listed:
        path = directory / name
        # Never through a link: only what is really inside the directory.
        if path.parent.resolve() == root.joinpath(name).parent and path.is_file() and not path.is_symlink():
            path.unlink()
    for root, _, _ in sorted(os.walk(directory), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(root)
        except OSError:
            return False
    return True


def write(out: Path, stack: str, mode: str, files: dict[str, Writer], needles: set[str]) -> list[str]:
    """Write `files` (relative path -> writer) as the plan in `out`. Returns warnings.

    OutputError: `out` may not be used (or cannot be written). PlanFailure: a secret would
    have been written. Either way, nothing is changed.
    """
    check(out)
    shown, out = out, physical(out)
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        physical(shown)  # no link put on the way meanwhile
        remove_leftovers(out)
        staging, lock = _locked_directory(parent, f".{out.name}.plan-")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputError(f"--out {shown}: cannot write to {parent} ({reason})") from None
    try:
        with interrupts.removed_on_signal(staging):
            for name, writer in files.items():
                path = staging / name
                path.parent.mkdir(parents=True, exist_ok=True)
                writer(path)
            marker = {"format": FORMAT, "stack": stack, "mode": mode, "files": sorted(files)}
            (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            _scan(staging, files, needles)
            os.chmod(staging, 0o777 & ~_umask())
            return _move_into_place(staging, out)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputError(f"--out {shown}: cannot write ({reason})") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)  # the plan's own, unfinished
        os.close(lock)


# What a run leaves beside `out` while it writes: its staging directory, and the earlier
# plan moved aside while the new one takes its place (tempfile.mkdtemp's 8-character names).
_LEFTOVER = r"\.{}\.(plan|old)-[a-z0-9_]{{8}}"


def _locked_directory(parent: Path, prefix: str, attempts: int = 10) -> tuple[Path, int]:
    """A new directory in `parent` and a descriptor holding it locked (flock) for as long
    as this run lives: `remove_leftovers` of another run leaves it alone. That run may lock
    and delete it between its creation and the lock here: then another is made."""
    for _ in range(attempts):
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue  # removed by another run before it could be locked
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_nlink > 0 and _same(path, os.fstat(fd)):
                return path, fd
        except BlockingIOError:
            pass
        os.close(fd)
    raise OSError(errno.EAGAIN, "other runs kept removing its staging directory")


def remove_leftovers(out: Path) -> None:
    """Remove what killed runs into `out` left beside it: staging directories no live run
    holds locked, and earlier plans moved aside (put back when `out` is missing: the run
    was killed between moving it aside and putting its own in place)."""
    pattern = re.compile(_LEFTOVER.format(re.escape(out.name)))
    try:
        names = os.listdir(out.parent)
    except OSError:
        return
    for name in names:
        match = pattern.fullmatch(name)
        if not match:
            continue
        path = out.parent / name
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_uid != os.geteuid() or not _same(path, os.fstat(fd)):
                continue  # another user's, or replaced meanwhile
            if match[1] == "plan":
                shutil.rmtree(path, ignore_errors=True)
            elif not os.path.lexists(out) and marker_files(path / "plan") is not None:
                os.rename(path / "plan", out)
                _rmdir(path)
            else:
                _discard_aside(path)
        except OSError:
            continue  # locked by a live run (BlockingIOError), or not ours to remove
        finally:
            os.close(fd)


def _move_into_place(staging: Path, out: Path, attempts: int = 50) -> list[str]:
    """Rename `staging` to `out`, moving an earlier plan there aside and deleting its files.
    Another run may put its plan in place meanwhile: then that one is replaced in turn.

    Signals wait while the plans are swapped (plan.interrupts.deferred): one that came
    meanwhile has the swap undone before it ends the run, so no plan is written."""
    warnings: list[str] = []
    for _ in range(attempts):
        if owned_files(out) is None:
            with interrupts.deferred():
                if interrupts.received():
                    return warnings  # leaving `deferred` ends the run
                try:
                    os.rename(staging, out)
                except OSError as exc:
                    if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                        continue  # another run got there first
                    raise OutputError(f"--out {out}: cannot write ({exc.strerror})") from None
                if interrupts.received():
                    os.rename(out, staging)
                else:
                    interrupts.written(out)
            return warnings
        holder, lock = _locked_directory(staging.parent, f".{out.name}.old-")
        try:
            with interrupts.deferred():
                if interrupts.received():
                    holder.rmdir()
                    return warnings
                try:
                    os.rename(out, holder / "plan")
                except FileNotFoundError:
                    holder.rmdir()
                    continue  # another run moved it away
                try:
                    os.rename(staging, out)
                except OSError:
                    try:
                        os.rename(holder / "plan", out)  # put the earlier plan back
                        holder.rmdir()
                        continue
                    except OSError:
                        pass  # another run's plan is in place: the earlier one goes
                    warnings += _discard_aside(holder)
                    continue
                if interrupts.received():
                    # Undone: the earlier plan back in place, this one back to staging.
                    os.rename(out, staging)
                    os.rename(holder / "plan", out)
                    holder.rmdir()
                    return warnings
                interrupts.written(out)
                return warnings + _discard_aside(holder)
        finally:
            os.close(lock)
    raise OutputError(f"--out {out}: other runs kept replacing it; try again")


def _discard_aside(holder: Path) -> list[str]:
    """Delete a plan moved aside into `holder`: only the files its marker lists go;
    anything added since stays, and is reported."""
    # An empty directory has no marker, and nothing to delete.
    listed = marker_files(holder / "plan") or set()
    if not _discard(holder / "plan", listed) or not _rmdir(holder):
        return [f"kept {holder}: it holds files the plan did not write"]
    return []


def _rmdir(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except OSError:
        return False
