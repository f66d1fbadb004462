import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { confirmInside } from "../core/index.js";

/*
 * confirmInside finds each listed name again through its opened directory, whose real path must lie inside the root:
 * by an lstat per name, or, when several names are wanted from it, by reading the directory (up to 32 entries per
 * name; the names not reached by then are lstat'ed). Every way must confirm exactly the same names, with their kinds.
 */
describe("search: confirming listed paths inside the root", () => {
  let tmp: string;
  let root: string;
  let outside: string;
  const kinds = (found: Array<[string, { isFile(): boolean; isDirectory(): boolean }]>) =>
    found.map(([rel, k]) => [rel, k.isFile() ? "file" : k.isDirectory() ? "dir" : "other"]);

  before(() => {
    tmp = realpathSync(mkdtempSync(path.join(tmpdir(), "agentd-confirm-")));
    root = path.join(tmp, "root");
    outside = path.join(tmp, "outside");
    mkdirSync(outside);
    for (const n of ["f0", "f1", "f2", "f3", "f4", "f5"]) writeFileSync(path.join(outside, n), "secret");
    // A small directory (read to its end when four or more of its names are wanted).
    mkdirSync(path.join(root, "small/sub"), { recursive: true });
    for (const n of ["f0", "f1", "f2", "f3", "f4", "f5"]) writeFileSync(path.join(root, "small", n), n);
    symlinkSync("f0", path.join(root, "small/link"));
    // A name that is not UTF-8: JavaScript sees it with U+FFFD.
    writeFileSync(
      Buffer.concat([Buffer.from(path.join(root, "small/bad-")), Buffer.from([0xff]), Buffer.from(".txt")]),
      "x",
    );
    // A large directory (its entries far outnumber the names wanted: reading stops early, the rest are lstat'ed).
    mkdirSync(path.join(root, "large"));
    for (let i = 0; i < 600; i++) writeFileSync(path.join(root, "large", `entry-with-a-long-name-${i}`), "");
    // A directory that is a link to outside the root.
    symlinkSync(outside, path.join(root, "escape"));
  });

  after(() => rmSync(tmp, { recursive: true, force: true }));

  it("confirms the names of a small directory, read through, with their kinds; gone names are dropped", async () => {
    const rels = ["small/f0", "small/f1", "small/sub", "small/link", "small/gone", "small/f5", "small/bad-\uFFFD.txt"];
    expect(kinds(await confirmInside(root, rels))).to.deep.equal([
      ["small/f0", "file"],
      ["small/f1", "file"],
      ["small/sub", "dir"],
      ["small/link", "other"],
      ["small/f5", "file"],
      ["small/bad-\uFFFD.txt", "file"],
    ]);
  });

  it("confirms the names of a large directory, read in part and the rest lstat'ed, the same way", async () => {
    const rels = ["large/entry-with-a-long-name-3", "large/nope", "large/entry-with-a-long-name-599"];
    rels.push("large/entry-with-a-long-name-10", "large/entry-with-a-long-name-11");
    expect(kinds(await confirmInside(root, rels))).to.deep.equal([
      ["large/entry-with-a-long-name-3", "file"],
      ["large/entry-with-a-long-name-599", "file"],
      ["large/entry-with-a-long-name-10", "file"],
      ["large/entry-with-a-long-name-11", "file"],
    ]);
  });

  it("drops every name of a directory whose real path is outside the root, however many are wanted", async () => {
    expect(await confirmInside(root, ["escape/f0"])).to.deep.equal([]);
    expect(await confirmInside(root, ["escape/f0", "escape/f1", "escape/f2", "escape/f3", "escape/f4"])).to.deep.equal(
      [],
    );
  });

  it("gives each name's lstat with { stats: true }, a name that is not UTF-8 found by its bytes", async () => {
    const found = await confirmInside(root, ["small/f0", "small/f1", "small/f2", "small/f3", "small/bad-\uFFFD.txt"], {
      stats: true,
    });
    expect(found.map(([rel]) => rel)).to.have.length(5);
    expect(found[0]?.[1].mtimeMs).to.equal(lstatSync(path.join(root, "small/f0")).mtimeMs);
    expect(found[4]?.[1].isFile()).to.equal(true);
    expect(found[4]?.[1].size).to.equal(1);
  });
});
