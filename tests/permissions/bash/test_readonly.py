"""Read-only classifier tables: (argv, expected read-only)."""

from __future__ import annotations

import shlex

import pytest

from permissions.bash.readonly import is_read_only_argv
from permissions.bash.validators import awk_read_only, git_read_only, sed_read_only

READ_ONLY = [
    "ls -la",
    "ls -R src",
    "cat -n README.md",
    "head -n5 f",
    "head -c 100 f",
    "tail -n 5 f",
    "tail -f log",
    "wc -l f",
    "grep -rn --exclude-dir=node_modules import .",
    "rg -n TODO .",
    "rg --glob *.py foo",
    "rg -g *.py -e foo",
    "sort -u f",
    "sort -k 2 -t , f",
    "sort -T /tmp f",
    "uniq -c",
    "uniq -c f",
    "xxd f",
    "xxd -c 16 f",
    "base64 f",
    "base64 -d f",
    "tree -L 2",
    "date -u +%s",
    "date",
    "hostname",
    "hostname -f",
    "printf %s x",
    "less f",
    "less -N f",
    "more f",
    "file f",
    "stat f",
    "du -sh .",
    "df -h",
    "diff -u a b",
    "jq .x f.json",
    "find . -maxdepth 1 -type f -newer README.md",
    "find . -name *.py -print",
    "git status --short",
    "git log --oneline -n 10",
    "git diff --no-ext-diff --stat",
    "git diff --no-textconv",
    "git show HEAD:README.md",
    "git -C /tmp status",
    "git --no-pager log",
    "git branch",
    "git branch -a -v",
    "git branch --list feat*",
    "git branch --contains HEAD",
    "git tag",
    "git tag -l v*",
    "git remote -v",
    "git remote get-url origin",
    "git stash list",
    "git stash show -p",
    "git config --get user.name",
    "git config --list",
    "git config get user.name",
    "git reflog",
    "git grep -n foo",
    "git worktree list",
    "sed -n 1,5p f",
    "sed s/a/b/g f",
    "sed -e s/a/b/ -e s/c/d/ f",
    "sed -n /foo/,/bar/p f",
    "sed -E s/(a|b)/x/g f",
    "sed 1d;$d f",
    "awk '{print $1}' f",
    "awk -F: '$3 > 100 {print $1}' f",
    "awk -v x=1 '{print x}' f",
    "awk 'NR==1 || /x/' f",
    "command -v ls",
    "env",
    "printenv PATH",
    "echo hello",
    "true",
    "[ -f x ]",
    "cd src",
]

NOT_READ_ONLY = [
    "touch x",
    "rm x",
    "mkdir d",
    "tee f",
    "bin/grep foo",
    "./ls",
    "/tmp/ls",
    "rg --pre ./x foo",
    "rg --pre=./x foo",
    "rg --pr=./x foo",
    "rg --hostname-bin=./x foo",
    "rg --hostname-bin ./x foo",
    "rg -z foo",
    "rg -nz foo",
    "rg --search-zip foo",
    "sort -o out f",
    "sort --output=out f",
    "sort --output out f",
    "sort -uo out f",
    "sort --compress-program=gzip f",
    "sort --compress-program gzip f",
    "shuf -o out f",
    "uniq a b",
    "xxd f out",
    "xxd -r f out",
    "base64 -o out f",
    "base64 --output=out f",
    "base64 -d a b",
    "tree -o out",
    "date -s 2020-01-01",
    "date --set=2020-01-01",
    "date 010101012000",
    "hostname evil",
    "hostname -F file",
    "printf -v x foo",
    "less +!touch f",
    "less -o log f",
    "less --log-file=log f",
    "more +/x f",
    "file -C -m magic",
    "yq -i .a=1 f.yaml",
    "fd -x rm",
    "fd --exec rm",
    "find . -exec touch x ;",
    "find . -execdir touch x ;",
    "find . -ok touch x ;",
    "find . -okdir touch x ;",
    "find . -delete",
    "find . -fprint out",
    "find . -fprint0 out",
    "find . -fprintf out %p",
    "find . -fls out",
    "git -c core.pager=x log",
    "git -p log",
    "git --paginate log",
    "git --git-dir=x status",
    "git --work-tree=x status",
    "git --exec-path=x status",
    "git --config-env=core.pager=X log",
    "git diff --output=x",
    "git diff --output x",
    "git log --ext-diff",
    "git diff --textconv",
    "git grep -O foo",
    "git grep -Oless foo",
    "git grep --open-files-in-pager=x foo",
    "git ls-remote .",
    "git ls-remote --upload-pack=x .",
    "git fetch --upload-pack=x",
    "git branch new",
    "git branch -d x",
    "git branch -D x",
    "git branch -m a b",
    "git branch --delete x",
    "git tag v1",
    "git tag -d v1",
    "git remote add x y",
    "git remote show origin",
    "git stash",
    "git stash pop",
    "git config user.name x",
    "git config --unset user.name",
    "git config --get x --add y",
    "git reflog expire",
    "git reflog delete x",
    "git push",
    "git commit -m x",
    "git st",
    "git help log",
    "git",
    "sed -i s/a/b/ f",
    "sed -ni p f",
    "sed --in-place s/a/b/ f",
    "sed -i.bak s/a/b/ f",
    "sed -f script f",
    "sed --file=script f",
    "sed 1w out f",
    "sed -n w\\ out f",
    "sed s/a/b/w out f",
    "sed s/a/b/e f",
    "sed 1e touch x f",
    "sed -e p -e w\\ out f",
    "sed --expression=w\\ out f",
    "sed",
    'awk BEGIN{system("x")}',
    "awk '{print > \"out\"}' f",
    "awk '{print >> \"out\"}' f",
    "awk '{print | \"sh\"}' f",
    "awk '{\"date\" | getline d}'",
    "awk -f prog.awk f",
    "awk -i inplace {print} f",
    "awk --source x",
    'gawk @load "x"',
    "tar -cf x .",
    "zip x.zip f",
    "unzip x.zip",
    "gzip f",
    "curl http://x",
    "wget http://x",
    "ssh host",
    "make -n",
    "npm test",
    "python3 -c print(1)",
    "xargs grep foo",
    "man ls",
    "env FOO=1 ls",
    "bash -c ls",
    "eval ls",
]


@pytest.mark.parametrize("line", READ_ONLY)
def test_read_only(line: str) -> None:
    assert is_read_only_argv(shlex.split(line)), line


@pytest.mark.parametrize("line", NOT_READ_ONLY)
def test_not_read_only(line: str) -> None:
    argv = shlex.split(line)
    if argv[0] == "env" and len(argv) > 1:
        pytest.skip("env with a command is judged in analysis, not by the table")
    assert not is_read_only_argv(argv), line


def test_unknown_arguments_only_for_programs_without_unsafe_flags() -> None:
    assert is_read_only_argv(["ls", "$x"], all_known=False)
    assert is_read_only_argv(["grep", "$pat", "."], all_known=False)
    assert not is_read_only_argv(["rg", "$x"], all_known=False)
    assert not is_read_only_argv(["find", ".", "$x"], all_known=False)
    assert not is_read_only_argv(["sort", "$x"], all_known=False)
    assert not is_read_only_argv(["git", "log", "$x"], all_known=False)


@pytest.mark.parametrize(
    ("args", "expected"),
    [(["-n", "p"], True), (["-n", "$p"], True), (["y/abc/xyz/"], True), (["s|a|b|w x"], False)],
)
def test_sed_scripts(args: list[str], expected: bool) -> None:
    assert sed_read_only(args) is expected


def test_awk_and_git_direct() -> None:
    assert awk_read_only(["{ print $1 }"])
    assert not awk_read_only(['{ system("ls") }'])
    assert not awk_read_only([])
    assert git_read_only(["log"])
    assert not git_read_only([])
