import os
import shutil
import subprocess
import sys

import pytest

from bcast_lint import files
from bcast_lint.config import Settings
from bcast_lint.files import SourceFile, discover

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def touch(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def paths(found, root):
    return [os.path.relpath(source.path, root) if source.path != "-" else "-" for source in found]


def discovered(root, settings=None, *extra):
    return list(discover([str(root), *extra], settings or Settings(root=str(root))))


def git_init(root):
    subprocess.run(["git", "init", "-q", str(root)], check=True)


# --- basics ----------------------------------------------------------------------------------


def test_directories_yield_python_sources_sorted(tmp_path):
    for name in ["b.py", "a.pyi", "pkg/z.py", "pkg/sub/y.py", "notes.txt", "pkg/data.json", "setup.cfg"]:
        touch(tmp_path / name)
    found = discovered(tmp_path)
    assert paths(found, tmp_path) == ["a.pyi", "b.py", "pkg/sub/y.py", "pkg/z.py"]
    assert all(source.error is None for source in found)


def test_explicit_files_are_linted_whatever_their_name_or_excludes(tmp_path):
    script = touch(tmp_path / "build" / "train")
    generated = touch(tmp_path / "gen.py")
    settings = Settings(extend_exclude=("gen.py",), root=str(tmp_path))
    found = list(discover([str(script), str(generated)], settings))
    assert found == [SourceFile(str(script)), SourceFile(str(generated))]


def test_output_is_sorted_and_deduplicated_across_arguments(tmp_path):
    touch(tmp_path / "b" / "x.py")
    touch(tmp_path / "a" / "y.py")
    found = list(discover([str(tmp_path / "b"), str(tmp_path / "a"), str(tmp_path / "b" / "x.py")], Settings()))
    assert paths(found, tmp_path) == ["a/y.py", "b/x.py"]


def test_current_directory_gives_plain_relative_paths(tmp_path, monkeypatch):
    touch(tmp_path / "pkg" / "m.py")
    monkeypatch.chdir(tmp_path)
    assert [source.path for source in discover(["."], Settings())] == [os.path.join("pkg", "m.py")]


def test_stdin_passes_through(tmp_path):
    touch(tmp_path / "a.py")
    found = list(discover(["-", str(tmp_path)], Settings(root=str(tmp_path))))
    assert found[0] == SourceFile("-")
    assert len(found) == 2


def test_missing_path_is_an_error(tmp_path):
    missing = str(tmp_path / "nope.py")
    assert list(discover([missing], Settings())) == [SourceFile(missing, "no such file or directory")]


def test_named_directory_that_is_excluded_is_still_walked(tmp_path):
    touch(tmp_path / "build" / "gen.py")
    touch(tmp_path / "build" / "dist" / "skip.py")
    found = list(discover([str(tmp_path / "build")], Settings(root=str(tmp_path))))
    assert paths(found, tmp_path) == ["build/gen.py"]


# --- excludes --------------------------------------------------------------------------------


def test_default_excludes_prune_directories(tmp_path):
    for name in [".venv/lib/a.py", "venv/b.py", "pkg/__pycache__/c.py", "node_modules/d.py", ".git/e.py", "ok.py"]:
        touch(tmp_path / name)
    assert paths(discovered(tmp_path), tmp_path) == ["ok.py"]


def test_exclude_and_extend_exclude(tmp_path):
    for name in ["build/a.py", "gen/b.py", "src/c_pb2.py", "src/legacy/d.py", "legacy/e.py", "src/f.py"]:
        touch(tmp_path / name)
    settings = Settings(exclude=("gen",), extend_exclude=("*_pb2.py", "legacy"), root=str(tmp_path))
    assert paths(discovered(tmp_path, settings), tmp_path) == ["build/a.py", "src/f.py"]


def test_slash_excludes_are_anchored_at_the_root(tmp_path):
    for name in ["tests/fixtures/a.py", "pkg/tests/fixtures/b.py", "tests/c.py"]:
        touch(tmp_path / name)
    settings = Settings(extend_exclude=("tests/fixtures",), root=str(tmp_path))
    assert paths(discovered(tmp_path, settings), tmp_path) == ["pkg/tests/fixtures/b.py", "tests/c.py"]


# --- gitignore -------------------------------------------------------------------------------


@needs_git
def test_gitignore_is_honoured_inside_a_work_tree(tmp_path):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "scratch/\n*_local.py\n!keep_local.py\n")
    for name in ["scratch/a.py", "pkg/b_local.py", "pkg/keep_local.py", "pkg/c.py", "pkg/scratch/d.py"]:
        touch(tmp_path / name)
    touch(tmp_path / "pkg" / ".gitignore", "generated.py\n")
    touch(tmp_path / "pkg" / "generated.py")
    assert paths(discovered(tmp_path), tmp_path) == ["pkg/c.py", "pkg/keep_local.py"]


@needs_git
def test_gitignore_is_not_honoured_when_turned_off(tmp_path):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "scratch/\n")
    touch(tmp_path / "scratch" / "a.py")
    settings = Settings(respect_gitignore=False, root=str(tmp_path))
    assert paths(discovered(tmp_path, settings), tmp_path) == ["scratch/a.py"]


@needs_git
def test_gitignore_applies_when_walking_a_subdirectory(tmp_path):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "out/\n")
    touch(tmp_path / "src" / "out" / "a.py")
    touch(tmp_path / "src" / "b.py")
    found = list(discover([str(tmp_path / "src")], Settings(root=str(tmp_path))))
    assert paths(found, tmp_path) == ["src/b.py"]


@needs_git
def test_named_directory_that_git_ignores_is_still_walked(tmp_path):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "scratch/\n")
    touch(tmp_path / "scratch" / "deep" / "a.py")
    found = list(discover([str(tmp_path / "scratch")], Settings(root=str(tmp_path))))
    assert paths(found, tmp_path) == ["scratch/deep/a.py"]


@needs_git
def test_nested_repository_uses_its_own_gitignore(tmp_path):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "outer_only.py\n")
    git_init(tmp_path / "vendored")
    touch(tmp_path / "vendored" / ".gitignore", "inner_only.py\n")
    for name in ["outer_only.py", "vendored/inner_only.py", "vendored/kept.py"]:
        touch(tmp_path / name)
    assert paths(discovered(tmp_path), tmp_path) == ["vendored/kept.py"]


@needs_git
def test_git_hook_variables_do_not_redirect_the_query(tmp_path, monkeypatch):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "ignored.py\n")
    touch(tmp_path / "ignored.py")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    assert discovered(tmp_path) == []


def test_outside_git_nothing_is_filtered(tmp_path):
    if files._locate(str(tmp_path))[0] is not None:
        pytest.skip("the temporary directory is inside a git work tree")
    touch(tmp_path / ".gitignore", "a.py\n")
    touch(tmp_path / "a.py")
    assert paths(discovered(tmp_path), tmp_path) == ["a.py"]


def test_missing_git_means_no_filtering(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()  # looks like a work tree, but git cannot be run
    touch(tmp_path / ".gitignore", "a.py\n")
    touch(tmp_path / "a.py")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert paths(discovered(tmp_path), tmp_path) == ["a.py"]


# --- symlinks and unreadable directories -----------------------------------------------------


def test_symlink_loop_to_an_ancestor_is_walked_once(tmp_path):
    touch(tmp_path / "pkg" / "a.py")
    (tmp_path / "pkg" / "again").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "pkg" / "self").symlink_to(tmp_path / "pkg", target_is_directory=True)
    assert paths(discovered(tmp_path), tmp_path) == ["pkg/a.py"]


def test_self_referencing_python_link_is_an_error_and_the_walk_goes_on(tmp_path):
    touch(tmp_path / "ok.py")
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    found = discovered(tmp_path)
    assert found == [
        SourceFile(str(tmp_path / "dangling.py"), "broken symbolic link"),
        SourceFile(str(tmp_path / "loop.py"), "symbolic link loop"),
        SourceFile(str(tmp_path / "ok.py")),
    ]


def test_named_symlink_loop_is_an_error(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert list(discover([str(tmp_path / "loop")], Settings())) == [
        SourceFile(str(tmp_path / "loop"), "symbolic link loop")
    ]


def test_symlinked_directory_elsewhere_is_followed(tmp_path):
    touch(tmp_path / "shared" / "util.py")
    touch(tmp_path / "project" / "main.py")
    (tmp_path / "project" / "shared").symlink_to(tmp_path / "shared", target_is_directory=True)
    found = list(discover([str(tmp_path / "project")], Settings(root=str(tmp_path / "project"))))
    assert paths(found, tmp_path) == ["project/main.py", "project/shared/util.py"]


@needs_git
def test_symlinked_directory_inside_a_repository_is_judged_where_it_lives(tmp_path):
    git_init(tmp_path)
    touch(tmp_path / ".gitignore", "real/skip.py\n")
    touch(tmp_path / "real" / "skip.py")
    touch(tmp_path / "real" / "keep.py")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    found = list(discover([str(tmp_path / "link")], Settings(root=str(tmp_path))))
    assert paths(found, tmp_path) == ["link/keep.py"]


def _unreadable_dir(path):
    path.mkdir()
    path.chmod(0)
    try:
        os.listdir(path)
    except PermissionError:
        return path
    path.chmod(0o755)
    return None


def test_unreadable_directory_is_an_error_and_the_walk_goes_on(tmp_path):
    touch(tmp_path / "a.py")
    locked = _unreadable_dir(tmp_path / "locked")
    if locked is None:
        pytest.skip("permissions do not stop this user (root) from reading directories")
    try:
        found = discovered(tmp_path)
    finally:
        locked.chmod(0o755)
    assert found == [SourceFile(str(tmp_path / "a.py")), SourceFile(str(locked), "permission denied")]


def test_directory_that_cannot_be_listed_is_an_error_and_the_walk_goes_on(tmp_path, monkeypatch):
    # Stands in for the permission test above where it is skipped: root can read anything.
    touch(tmp_path / "a.py")
    touch(tmp_path / "locked" / "b.py")
    touch(tmp_path / "z" / "c.py")
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(path) == "locked":
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(files.os, "scandir", scandir)
    assert discovered(tmp_path) == [
        SourceFile(str(tmp_path / "a.py")),
        SourceFile(str(tmp_path / "locked"), "permission denied"),
        SourceFile(str(tmp_path / "z" / "c.py")),
    ]


def test_importing_files_does_not_import_libcst():
    code = "import sys, bcast_lint.files; sys.exit('libcst' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_named_fifo_is_an_error_not_a_read_that_waits_forever(tmp_path):
    fifo = tmp_path / "x.py"
    os.mkfifo(fifo)
    assert list(discover([str(fifo)], Settings())) == [SourceFile(str(fifo), "not a regular file")]


@pytest.mark.timeout(60)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_cli_on_a_named_fifo_reports_it_and_lints_the_rest(tmp_path):
    os.mkfifo(tmp_path / "x.py")
    touch(tmp_path / "ok.py", "print(1)\n")
    done = subprocess.run([sys.executable, "-m", "bcast_lint", "--no-cache", "x.py", "ok.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "x.py: error: not a regular file" in done.stderr, done.stderr
