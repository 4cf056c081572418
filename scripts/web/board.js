// The backgammon board in SVG: draws a position given as the server sends it (26 numbers
// from the bottom player's side: 1-24 his points, > 0 his checkers, < 0 the other side's;
// 25 his bar, 0 the other's bar), the dice, the cube, and the moves that may be made.
// It knows no rules: what may be clicked comes from the server (/turn).

const NS = "http://www.w3.org/2000/svg";
const PW = 44;            // point width
const R = 19;             // checker radius
const BAR = 48;           // bar width
const TOP = 36, BOT = 496; // inner board edges
const LEFT = 60;          // left edge of the left half (room for the cube)
const RIGHT = LEFT + 12 * PW + BAR;  // right edge of the right half
const TRAY = RIGHT + 12;  // bear-off tray
const PH = 190;           // point height
export const WIDTH = TRAY + 56, HEIGHT = 532;

function el(name, attrs = {}, parent = null) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

/** Left x of point p (1-24, bottom player's numbering) and whether it is on the top row. */
function pointX(p) {
  if (p <= 6) return [LEFT + 6 * PW + BAR + (6 - p) * PW, false];
  if (p <= 12) return [LEFT + (12 - p) * PW, false];
  if (p <= 18) return [LEFT + (p - 13) * PW, true];
  return [LEFT + 6 * PW + BAR + (p - 19) * PW, true];
}

/** Centre of the k-th checker (0 = at the edge) of a stack of n on point p. */
function stackXY(p, k, n) {
  const [x, top] = pointX(p);
  const step = n > 5 ? (PH - 2 * R) / (n - 1) : 2 * R;
  const d = R + k * step;
  return [x + PW / 2, top ? TOP + d : BOT - d];
}

/** Centre of the k-th checker on a bar: side 0 (bottom player) above the middle, side 1 below. */
function barXY(side, k, n) {
  const x = LEFT + 6 * PW + BAR / 2;
  const step = n > 4 ? (PH - 60) / (n - 1) : 2 * R;
  const mid = (TOP + BOT) / 2;
  return side === 0 ? [x, mid - 30 - R - k * step] : [x, mid + 30 + R + k * step];
}

/** Top-left of the k-th borne-off checker of a side (0 bottom, 1 top) in the tray. */
function offXY(side, k) {
  return side === 0 ? [TRAY + 6, BOT - 12 - k * 12] : [TRAY + 6, TOP + k * 12];
}

/** The top checker of `side` on a place of `board` (p 1-24 in the bottom numbering, 25 that
 * side's bar, 0 its tray); with extra = 1 the spot where one more would go. */
export function placeXY(board, side, place, extra = 0) {
  if (place === 0) {
    const off = 15 - board.reduce((s, v, i) => s + (side === 0 ? Math.max(v, 0) : Math.max(-v, 0)), 0);
    const [x, y] = offXY(side, Math.max(0, off - 1 + extra));
    return [x + 22, y + 5];
  }
  if (place === 25) {
    const n = side === 0 ? board[25] : -board[0];
    return barXY(side, Math.max(0, n - 1 + extra), Math.max(n + extra, 1));
  }
  const n = Math.abs(board[place]);
  return stackXY(place, Math.max(0, n - 1 + extra), Math.max(n + extra, 1));
}

export class Board {
  /** @param {SVGSVGElement} svg */
  constructor(svg, onPlace) {
    this.svg = svg;
    this.onPlace = onPlace;   // onPlace(place, how) when a point, the bar or the tray is chosen
    svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
    this.drag = null;
  }

  /**
   * Draw everything. view: {board, off, pips, dice, diceSide, cube: {value, owner}, sources,
   * targets, selected, labels: [bottom, top]}; owner: null centred, 0 bottom, 1 top.
   */
  draw(view) {
    const svg = this.svg;
    svg.replaceChildren();
    el("rect", { x: 0, y: 0, width: WIDTH, height: HEIGHT, class: "frame" }, svg);
    el("rect", { x: LEFT, y: TOP, width: 12 * PW + BAR, height: BOT - TOP, class: "felt" }, svg);
    el("rect", { x: LEFT + 6 * PW, y: TOP, width: BAR, height: BOT - TOP, class: "bar", "data-place": "25" }, svg);
    el("rect", { x: TRAY, y: TOP, width: 44, height: BOT - TOP, class: "tray", "data-place": "0" }, svg);
    const sources = new Set(view.sources || []);
    const targets = new Set(view.targets || []);
    for (let p = 1; p <= 24; p++) {
      const [x, top] = pointX(p);
      const tip = top ? TOP + PH : BOT - PH;
      const base = top ? TOP : BOT;
      const cls = ["point", (p % 2) ? "odd" : "even"];
      if (targets.has(p)) cls.push("target");
      if (sources.has(p)) cls.push("source");
      if (view.selected === p) cls.push("selected");
      el("polygon", { points: `${x},${base} ${x + PW},${base} ${x + PW / 2},${tip}`, class: cls.join(" "),
                      "data-place": p }, svg);
      const label = el("text", { x: x + PW / 2, y: top ? TOP - 6 : BOT + 15, class: "pointnum" }, svg);
      label.textContent = p;
    }
    if (targets.has(0)) svg.querySelector(".tray").classList.add("target");
    if (targets.has(25) || sources.has(25)) svg.querySelector(".bar").classList.add(sources.has(25) ? "source" : "target");
    const b = view.board;
    for (let p = 1; p <= 24; p++) {
      const n = Math.abs(b[p]);
      const side = b[p] > 0 ? 0 : 1;
      for (let k = 0; k < n; k++) {
        const [cx, cy] = stackXY(p, k, n);
        this.checker(cx, cy, side, p, k === n - 1 && side === 0 && sources.has(p));
      }
    }
    for (const side of [0, 1]) {
      const n = side === 0 ? b[25] : -b[0];
      for (let k = 0; k < n; k++) {
        const [cx, cy] = barXY(side, k, n);
        this.checker(cx, cy, side, 25, side === 0 && k === n - 1 && sources.has(25));
      }
      const off = view.off[side];
      for (let k = 0; k < off; k++) {
        const [x, y] = offXY(side, k);
        el("rect", { x, y, width: 32, height: 10, rx: 2, class: `offchecker side${side}`, "data-side": side }, svg);
      }
    }
    this.drawCube(view.cube);
    if (view.dice) this.drawDice(view.dice, view.diceSide ?? 0, view.diceUsed || []);
    const labels = view.labels || ["", ""];
    for (const side of [0, 1]) {
      const t = el("text", { x: LEFT, y: side === 0 ? HEIGHT - 5 : 17, class: "pips", "data-side": side }, svg);
      t.textContent = `${labels[side]}: ${view.pips[side]} pips`;
    }
    this.bindPointer();
  }

  checker(cx, cy, side, place, movable) {
    el("circle", { cx, cy, r: R, class: `checker side${side}${movable ? " movable" : ""}`,
                   "data-side": side, "data-point": place, "data-place": place }, this.svg);
  }

  drawCube(cube) {
    if (!cube) return;
    const y = cube.owner === null ? (TOP + BOT) / 2 - 20 : cube.owner === 0 ? BOT - 44 : TOP + 4;
    const g = el("g", { class: "cube", "data-value": cube.value, "data-owner": cube.owner === null ? "centre" : cube.owner,
                        "data-offered": cube.offered ? "1" : "0" }, this.svg);
    const x = cube.offered ? LEFT + 9 * PW + BAR - 20 : 10;
    const yy = cube.offered ? (TOP + BOT) / 2 - 20 : y;
    el("rect", { x, y: yy, width: 40, height: 40, rx: 6, class: "cuberect" }, g);
    const t = el("text", { x: x + 20, y: yy + 27, class: "cubetext" }, g);
    t.textContent = cube.offered ? 2 * cube.value : (cube.owner === null && cube.value === 1 ? 64 : cube.value);
  }

  drawDice(dice, side, used) {
    const x0 = side === 0 ? LEFT + 6 * PW + BAR + 2 * PW : LEFT + 2 * PW;
    const y = (TOP + BOT) / 2 - 20;
    const g = el("g", { class: "dice", "data-dice": dice.join(","), "data-side": side }, this.svg);
    dice.forEach((d, i) => {
      const x = x0 + i * 50;
      el("rect", { x, y, width: 40, height: 40, rx: 7, class: `die side${side}${used[i] ? " used" : ""}` }, g);
      const spots = { 1: [[2, 2]], 2: [[1, 1], [3, 3]], 3: [[1, 1], [2, 2], [3, 3]], 4: [[1, 1], [1, 3], [3, 1], [3, 3]],
                      5: [[1, 1], [1, 3], [2, 2], [3, 1], [3, 3]], 6: [[1, 1], [1, 2], [1, 3], [3, 1], [3, 2], [3, 3]] }[d];
      for (const [a, c] of spots) el("circle", { cx: x + a * 10, cy: y + c * 10, r: 3.6, class: `spot side${side}` }, g);
    });
  }

  /** Animate one checker of `side` from `from` on board `before` to `to` on board `after`. */
  async slide(before, after, side, from, to, ms = 320) {
    const [x0, y0] = placeXY(before, side, from);
    const [x1, y1] = placeXY(after, side, to);
    const c = el("circle", { cx: x0, cy: y0, r: R, class: `checker side${side} moving` }, this.svg);
    const t0 = performance.now();
    await new Promise((done) => {
      const frame = (now) => {
        const f = Math.min(1, (now - t0) / ms);
        const e = f < 0.5 ? 2 * f * f : 1 - 2 * (1 - f) * (1 - f);
        c.setAttribute("cx", x0 + (x1 - x0) * e);
        c.setAttribute("cy", y0 + (y1 - y0) * e);
        if (f < 1) requestAnimationFrame(frame); else done();
      };
      requestAnimationFrame(frame);
    });
    c.remove();
  }

  placeAt(clientX, clientY) {
    const hit = document.elementsFromPoint(clientX, clientY).find((e) => e.dataset && e.dataset.place !== undefined
      && !e.classList.contains("moving"));
    return hit ? Number(hit.dataset.place) : null;
  }

  bindPointer() {
    if (this.bound) return;
    this.bound = true;
    this.svg.addEventListener("pointerdown", (ev) => {
      const place = this.placeAt(ev.clientX, ev.clientY);
      if (place === null) return;
      const target = ev.target;
      if (target.classList && target.classList.contains("movable")) {
        this.drag = { place, x: ev.clientX, y: ev.clientY, moved: false, node: target };
        this.svg.setPointerCapture(ev.pointerId);
      } else {
        this.onPlace(place, "click");
      }
    });
    this.svg.addEventListener("pointermove", (ev) => {
      const d = this.drag;
      if (!d) return;
      if (Math.hypot(ev.clientX - d.x, ev.clientY - d.y) > 6) d.moved = true;
      if (d.moved) {
        const m = this.svg.getScreenCTM().inverse();
        const pt = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m);
        d.node.setAttribute("cx", pt.x);
        d.node.setAttribute("cy", pt.y);
        d.node.classList.add("moving");
      }
    });
    this.svg.addEventListener("pointerup", (ev) => {
      const d = this.drag;
      this.drag = null;
      if (!d) return;
      if (!d.moved) { this.onPlace(d.place, "click"); return; }
      const to = this.placeAt(ev.clientX, ev.clientY);
      this.onPlace(d.place, "drag", to);
    });
  }
}
