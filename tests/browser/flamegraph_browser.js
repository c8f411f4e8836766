// The flame graph in a real browser (Debian's chromium, headless, driven by
// puppeteer-core): it loads without any network request, a click zooms into
// a frame, "Reset zoom" undoes it, a search highlights the matching frames
// and shows their share, and the screenshot is not blank.
//   usage: node flamegraph_browser.js CHROMIUM SVG SCREENSHOT_PNG
'use strict';
const path = require('path');
const puppeteer = require('puppeteer-core');

function fail(msg) {
  console.error('FAIL: ' + msg);
  process.exit(1);
}

async function main() {
  const [chromium, svg, shot] = process.argv.slice(2);
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    // Root in a container: chromium's own sandbox needs user namespaces.
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const page = await browser.newPage();
    const outside = [];
    const errors = [];
    page.on('request', (r) => { if (!/^(file|data):/.test(r.url())) outside.push(r.url().slice(0, 80)); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.setViewport({width: 1240, height: 400});
    await page.goto('file://' + path.resolve(svg), {waitUntil: 'load'});
    await page.waitForFunction(() => window.fg && fg.frames.length > 0, {timeout: 10000});
    const full = await page.evaluate(() => fg.width - 2 * fg.pad);

    // A frame narrower than the whole, as deep as possible but wide enough to hit.
    const target = await page.evaluate(() => {
      let best = null;
      for (const f of fg.frames) {
        if (f.w < 40 || f.w > fg.width - 2 * fg.pad - 1) continue;
        if (best === null || f.y < best.y) best = f;
      }
      return best && {name: best.n, x: best.x, y: best.y, w: best.w, index: fg.frames.indexOf(best)};
    });
    if (!target) fail('no frame to click');
    await page.mouse.click(target.x + target.w / 2, target.y + 8);
    const zoomed = await page.evaluate((i) => ({
      w: +fg.frames[i].r.getAttribute('width'),
      reset: document.getElementById('reset').style.display,
      hidden: fg.frames.filter((f) => f.g.style.display === 'none').length,
    }), target.index);
    if (Math.abs(zoomed.w - full) > 0.5) fail(`click on '${target.name}': width ${zoomed.w}, want ${full}`);
    if (zoomed.reset === 'none') fail('no Reset zoom button after a zoom');
    console.log(`ok: click zooms '${target.name}' from ${target.w} to ${zoomed.w} px (${zoomed.hidden} frames hidden)`);

    const reset = await page.$('#reset');
    await reset.click();
    const back = await page.evaluate((i) => +fg.frames[i].r.getAttribute('width'), target.index);
    if (Math.abs(back - target.w) > 0.1) fail(`reset: width ${back}, want ${target.w}`);
    console.log('ok: Reset zoom restores the layout');

    // The search asks with window.prompt: answer it with the clicked frame's name.
    const term = target.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    page.once('dialog', (d) => d.accept(term));
    await (await page.$('#search')).click();
    await page.waitForFunction(() => document.querySelectorAll('g.hit').length > 0, {timeout: 5000});
    const found = await page.evaluate(() => ({
      hits: document.querySelectorAll('g.hit').length,
      fill: document.querySelector('g.hit rect').getAttribute('fill'),
      matched: document.getElementById('matched').textContent,
    }));
    const m = /^Matched: ([0-9.]+)% \((\d+) frames\)$/.exec(found.matched);
    if (!m || +m[1] <= 0 || +m[1] > 100 || +m[2] !== found.hits)
      fail(`search '${term}': '${found.matched}' for ${found.hits} highlighted frames`);
    if (found.fill !== 'rgb(230,0,230)') fail(`a match is not highlighted (fill ${found.fill})`);
    console.log(`ok: search /${term}/ highlights ${found.hits} frame(s): ${found.matched}`);

    const png = await page.screenshot({path: shot, type: 'png'});
    // Not blank: the screenshot, drawn on a canvas, has many colours.
    const colours = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElementNS('http://www.w3.org/1999/xhtml', 'canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, Buffer.from(png).toString('base64'));
    if (colours < 20) fail(`the screenshot has ${colours} colours: blank`);
    console.log(`ok: screenshot ${shot}: ${png.length} bytes, ${colours} colours`);
    if (outside.length) fail('requests outside the file: ' + outside.join(' '));
    if (errors.length) fail('script errors: ' + errors.join('; '));
  } finally {
    await browser.close();
  }
  console.log('PASS');
}

main().catch((e) => fail(e.stack || String(e)));
