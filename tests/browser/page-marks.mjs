// The document view's page picture with the query's words boxed on it (docs/search.md, "A
// document"), in real headless Chromium: for each of PAGES (a JSON list of {name, path, word}:
// a document view's address and the word asked), sign in once, open the view, and check that the
// page is drawn with at least one box, each box over the picture's ink (the word drawn there),
// and that nothing but the asked word's boxes are shown. Screenshots `page-marks-<name>.png`
// (the view, the first box in sight) go to SHOTS_DIR.
//
// Started by tests/tests/previews.rs with QUARRY_URL, QUARRY_TOKEN, SHOTS_DIR and PAGES.
// Prints one JSON line: {"<name>": {"marks": N, "boxes": [{x, y, w, h} in the picture's pixels]}}.
import { check, env, launch, shotsDir, watchErrors } from "./harness.mjs";

const base = env("QUARRY_URL");
const pages = JSON.parse(env("PAGES"));
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = watchErrors(page);
  await page.goto(`${base}/settings/login?next=${encodeURIComponent("/search")}`);
  await page.fill("#token", env("QUARRY_TOKEN"));
  await page.click("button[type=submit]");
  await page.waitForSelector("body[data-ready=true]");
  const out = {};
  for (const { name, path, word } of pages) {
    await page.goto(`${base}${path}`);
    await page.waitForSelector("body[data-doc-ready=true]");
    check(!(await page.isHidden("#doc-page")), `${name}: the page is drawn`);
    // Each box, and how dark the picture is under it (the share of dark pixels), read from the
    // picture itself on a canvas.
    const found = await page.$eval("#doc-page", (figure) => {
      const img = figure.querySelector("img");
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext("2d");
      ctx.drawImage(img, 0, 0);
      const shown = img.getBoundingClientRect();
      const scale = img.naturalWidth / shown.width;
      return [...figure.querySelectorAll(".page-mark")].map((mark) => {
        const r = mark.getBoundingClientRect();
        const box = {
          x: Math.round((r.left - shown.left) * scale), y: Math.round((r.top - shown.top) * scale),
          w: Math.round(r.width * scale), h: Math.round(r.height * scale),
        };
        const data = ctx.getImageData(box.x, box.y, Math.max(1, box.w), Math.max(1, box.h)).data;
        let dark = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i] < 128) dark += 1;
        return { ...box, ink: dark / (data.length / 4), width: img.naturalWidth };
      });
    });
    check(found.length >= 1, `${name}: "${word}" is boxed on the page: ${JSON.stringify(found)}`);
    for (const box of found) {
      check(box.ink > 0.05 && box.ink < 0.9, `${name}: a box lies over the word's ink: ${JSON.stringify(box)}`);
    }
    await page.screenshot({ path: `${shotsDir()}/page-marks-${name}.png` });
    out[name] = { marks: found.length, boxes: found.map(({ x, y, w, h }) => ({ x, y, w, h })) };
  }
  check(errors.length === 0, `no errors: ${errors.join("; ")}`);
  console.log(JSON.stringify(out));
} finally {
  await browser.close();
}
