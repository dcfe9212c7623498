"""src/kit/fileio.py's walk over folder trees that others made: the upload's reader, the sandbox's copy and the
clean-up as root all walk with it, so no tree may make it recurse, follow a link or keep a descriptor."""

import os
import sys

import pytest

from kit.fileio import FOLDER_FLAGS, walk_folders


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def deep_tree(top, depth):
    """top/d/d/.../d, `depth` folders below top, made through descriptors (the path outgrows PATH_MAX)."""
    fd = os.open(top, FOLDER_FLAGS)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        below = os.open("d", FOLDER_FLAGS, dir_fd=fd)
        os.close(fd)
        fd = below
    os.close(fd)


def remove_deep_tree(top, depth):
    """Remove what deep_tree made, deepest folder first, through descriptors: pytest's own clean-up of tmp_path
    (shutil.rmtree, recursive before Python 3.12) cannot remove a tree deeper than the recursion limit."""
    fds = [os.open(top, FOLDER_FLAGS)]
    try:
        for _ in range(depth - 1):
            fds.append(os.open("d", FOLDER_FLAGS, dir_fd=fds[-1]))
        for fd in reversed(fds):
            os.rmdir("d", dir_fd=fd)
    finally:
        for fd in fds:
            os.close(fd)


def names(fd):
    return sorted(e.name for e in os.scandir(fd) if e.is_dir(follow_symlinks=False))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_a_tree_deeper_than_the_recursion_limit_is_walked_and_every_descriptor_closed(tmp_path):
    depth = sys.getrecursionlimit() + 200
    deep_tree(tmp_path, depth)
    levels = []
    top = os.open(tmp_path, FOLDER_FLAGS)
    before = open_fds()
    walk_folders(top, 0, lambda fd, where, level: levels.append((where, level)) or names(fd),
                 lambda where, name: where + 1)
    assert open_fds() == before
    os.close(top)
    assert levels == [(k, k + 1) for k in range(depth + 1)]
    remove_deep_tree(tmp_path, depth)


def test_folders_are_visited_parent_first_and_links_are_not_followed(tmp_path):
    for path in ("a/b", "a/c", "e"):
        (tmp_path / path).mkdir(parents=True)
    (tmp_path / "a" / "link").symlink_to(tmp_path / "e")
    seen = []

    def visit(fd, where, level):
        seen.append(where)
        return names(fd) + ["link", "gone"]  # a link and a name that is not there are passed over

    top = os.open(tmp_path, FOLDER_FLAGS)
    walk_folders(top, "", visit, lambda where, name: f"{where}/{name}")
    os.close(top)
    assert sorted(seen) == ["", "/a", "/a/b", "/a/c", "/e"]
    assert seen.index("/a") < seen.index("/a/b") and seen.index("/a") < seen.index("/a/c")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
@pytest.mark.parametrize("fails_in", ["visit", "go_down"])
def test_what_visit_or_go_down_raises_leaves_no_descriptor_open(tmp_path, fails_in):
    deep_tree(tmp_path, 5)

    def visit(fd, where, level):
        if fails_in == "visit" and level == 4:
            raise RuntimeError("stop")
        return names(fd)

    def go_down(where, name):
        if fails_in == "go_down" and where == 3:
            raise RuntimeError("stop")
        return where + 1

    top = os.open(tmp_path, FOLDER_FLAGS)
    before = open_fds()
    with pytest.raises(RuntimeError):
        walk_folders(top, 0, visit, go_down)
    assert open_fds() == before
    os.close(top)


def test_one_rule_reads_the_question_and_prediction_files(tmp_path):
    """kit/fileio.py's read_lines and read_tsv are the one rule of every reader of these files (run.py, the
    baseline, the grader, the tools): lines split at "\\n" only, "\\r" line ends dropped, a blank line kept as an
    empty answer but skipped as a question, a byte that is not UTF-8 read as U+FFFD."""
    from kit.baseline import baseline, most_common_place
    from kit.fileio import read_lines, read_tsv, split_lines

    assert split_lines("Rome\r\n\nParis\x0cx\u2028y\n") == ["Rome", "", "Paris\x0cx\u2028y"]

    path = tmp_path / "birth.tsv"
    path.write_bytes(b"Where was A born?\tRome\r\n\nWhere was\x0cB born?\tParis\nWhere was C born?\tParis\n"
                     b"Where was D born?\tRome\n\xff\tLima")
    assert read_lines(path) == ["Where was A born?\tRome", "", "Where was\x0cB born?\tParis",
                                "Where was C born?\tParis", "Where was D born?\tRome", "\ufffd\tLima"]
    assert [row[1] for row in read_tsv(path)] == ["Rome", "Paris", "Paris", "Rome", "Lima"]
    assert most_common_place(path) == "Rome"  # two each: the place seen first, not the first by name or hash
    assert baseline(path, path) == ("Rome", 2, 5)
