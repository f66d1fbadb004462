import { expect } from "chai";
import { checkPlanModeCommand } from "../plugins/tools-shell/index.js";

describe("tools-shell: plan-mode allowlist", () => {
  const allowed = [
    "ls -la",
    "cat README.md | head -20",
    "grep -rn TODO src | wc -l",
    "rg --files | sort | uniq -c",
    "find . -name '*.ts' -type f",
    "git status && git log --oneline -10",
    "git diff HEAD~1 -- src",
    "git show HEAD:package.json",
    "git branch",
    "git branch -a -v",
    "git branch --list 'feat*'",
    "git tag",
    "git remote -v",
    "git config --get user.name",
    "git stash list",
    "pwd; tree -L 2",
    "wc -l src/*.ts 2>/dev/null",
    "ls missing 2>&1 | head",
    "sed -n '10,20p' file.txt",
    "sed 's/foo/bar/g' file.txt",
    "find . -name '*.ts' | xargs grep -l foo",
    "echo $HOME",
    "du -sh . && df -h",
    "jq .name package.json",
    "sort -u names.txt",
    "date +%Y",
    "LC_ALL=C sort file",
    "cd src && ls",
    "[[ -f package.json ]] && cat package.json",
    "command -v node",
    "head -5 < file.txt",
  ];
  for (const cmd of allowed) {
    it(`allows ${JSON.stringify(cmd)}`, () => {
      expect(checkPlanModeCommand(cmd)).to.deep.equal({ allowed: true });
    });
  }

  const refused: Array<[string, RegExp]> = [
    ["echo hi > out.txt", /">out\.txt"/],
    ["ls >> log", /">>log"/],
    ["cat a 2> err.txt", /"2>err\.txt"/],
    ["ls &> all.txt", /"&>all\.txt"/],
    ["npm install", /"npm" is not on the plan-mode read-only allowlist/],
    ["ls && rm -rf build", /"rm" is not on/],
    ["ls | sh", /"sh" is not on/],
    ["cat $(ls)", /command substitution in "\$\(ls\)"/],
    ["echo `id`", /command substitution/],
    ["diff <(ls a) <(ls b)", /process substitution/],
    ["sleep 10 &", /background/],
    ["(ls)", /subshell/],
    ["for f in *; do cat $f; done", /for loop/],
    ["f() { ls; }; f", /function/],
    ["find . -delete", /"find -delete"/],
    ["find . -exec cat {} \\;", /"find -exec"/],
    ["git push", /"git push" is not a read-only git command/],
    ["git commit -m x", /"git commit"/],
    ["git branch new-feature", /changes the repository/],
    ["git branch -D old", /changes the repository/],
    ["git -c core.pager=sh log", /"git -c"/],
    ["git diff --output=patch.txt", /--output/],
    ["sed -i 's/a/b/' file", /edits files in place/],
    ["sed 'w out.txt' file", /sed script/],
    ["sed -n '1e id' file", /sed script/],
    ["sort -o out.txt in.txt", /"sort -o"/],
    ["tree -o out.txt", /writes files/],
    ["rg --pre ./evil foo", /preprocessor/],
    ["./script.sh", /by path/],
    ["$CMD arg", /only known at run time/],
    ["PAGER=evil git log", /variable "PAGER"/],
    ["xargs rm < list.txt", /"rm" is not on/],
    ["date -s 2020-01-01", /sets the clock/],
    ["echo 'unterminated", /could not be parsed/],
  ];
  for (const [cmd, reason] of refused) {
    it(`refuses ${JSON.stringify(cmd)} and says why`, () => {
      const verdict = checkPlanModeCommand(cmd);
      expect(verdict.allowed).to.equal(false);
      if (!verdict.allowed) expect(verdict.reason).to.match(reason);
    });
  }
});
