// The board page: analysis of any position and a game against Tabla, through the server's
// API only (/position, /best, /eval, /cube for analysis; /game, /turn, /best, /cube for play).
// The page keeps the game object the server sent last and sends it back with each action;
// it applies no rule itself.

import { Board } from "./board.js";

const $ = (id) => document.getElementById(id);
const YOU = 0, TABLA = 1;
const state = { mode: "analysis", game: null, view: null, turn: null, steps: [], selected: null, pos: null };
window.tabla = { state };  // for people (and tests) who want to look inside
let busy = 0;

class ApiError extends Error {}

async function api(path, body) {
  busy++; document.body.dataset.busy = "1";
  try {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                  body: JSON.stringify(body) });
    const reply = await r.json();
    if (!reply.ok) throw new ApiError(reply.error || `${r.status} ${r.statusText}`);
    return reply;
  } finally {
    if (--busy === 0) document.body.dataset.busy = "0";
  }
}

async function task(fn) {
  busy++; document.body.dataset.busy = "1";
  try { await fn(); } catch (e) {
    say(e instanceof ApiError ? e.message : `error: ${e.message}`, true);
    if (!(e instanceof ApiError)) console.warn(e);
  } finally {
    if (--busy === 0) document.body.dataset.busy = "0";
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function say(text, error = false) { const m = $("message"); m.textContent = text; m.classList.toggle("error", error); }
function log(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("log").prepend(li);
  while ($("log").children.length > 8) $("log").lastChild.remove();
}
const board = new Board($("board"), (place, how, to) => task(() => onPlace(place, how, to)));

function show(ids) {
  for (const id of ["roll", "double", "take", "pass", "undo", "submit", "next-game", "game-hint"]) $(id).hidden = !ids.includes(id);
}

const OWNER = { centre: null, player: 0, opponent: 1 };
const fmt = (x) => (x >= 0 ? "+" : "") + x.toFixed(3);
const diceText = (d) => `${d[0]}-${d[1]}`;

// ------------------------------------------------------------------ analysis
function readPositionInput() {
  const text = $("pos-input").value.trim();
  const req = {};
  if (/^xgid=/i.test(text)) req.xgid = text;
  else if (text.includes(":")) [req.position_id, req.match_id] = text.split(":", 2).map((s) => s.trim());
  else req.position_id = text;
  const dice = $("dice-input").value.trim();
  if (dice) req.dice = dice;
  return req;
}

function queryOf(pos) {
  return { position_id: pos.position_id, cube_value: pos.cube_value, cube_owner: pos.cube_owner,
           match_length: pos.match_length, score: pos.score, crawford: pos.crawford, jacoby: pos.jacoby,
           beavers: pos.beavers };
}

function drawAnalysis() {
  const p = state.pos;
  board.draw({ board: p.board, off: p.off, pips: p.pips, dice: p.dice, diceSide: 0,
               cube: { value: p.cube_value, owner: OWNER[p.cube_owner] }, labels: ["on roll", "opponent"] });
  $("score").textContent = p.match_length ? `${p.match_length}-point match, score ${p.score[0]}-${p.score[1]}`
    + (p.crawford ? " (Crawford)" : "") : "Money game";
  $("match-id").textContent = `Position ID ${p.position_id}`;
}

async function showPosition() {
  state.mode = "analysis";
  show([]);
  state.pos = await api("/position", readPositionInput());
  drawAnalysis();
  say(state.pos.dice ? `Player on roll to play ${diceText(state.pos.dice)}` : "Player on roll, before the roll");
}

function fillHints(reply) {
  const tbody = $("hints").querySelector("tbody");
  tbody.replaceChildren();
  const cubeful = reply.candidates.some((c) => c.cubeful_equity !== undefined);
  const best = reply.candidates[0];
  const value = (c) => (cubeful ? c.cubeful_equity : c.equity);
  reply.candidates.forEach((c, i) => {
    const tr = document.createElement("tr");
    const cells = [i + 1, c.play || "(no move)", fmt(value(c)), i ? fmt(value(c) - value(best)) : "", c.why || ""];
    cells.forEach((v, k) => {
      const td = document.createElement("td");
      td.textContent = v;
      if (k === 2 || k === 3) td.className = "num";
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  });
  $("hints").hidden = false;
}

async function hint(query, dice, ply) {
  const reply = await api("/best", { ...query, dice, top: 5, why: true, ply });
  fillHints(reply);
  return reply;
}

async function evaluate() {
  await showPosition();
  const q = queryOf(state.pos);
  const [ev, cube] = [await api("/eval", { ...q, ply: 1 }), await api("/cube", { ...q, ply: 1 })];
  const pr = ev.probabilities;
  const rows = [["win", pr.win], ["win gammon", pr.win_gammon], ["win backgammon", pr.win_backgammon],
                ["lose gammon", pr.lose_gammon], ["lose backgammon", pr.lose_backgammon]]
    .map(([k, v]) => `<tr><td>${k}</td><td>${(100 * v).toFixed(1)}%</td></tr>`).join("");
  const eq = cube.equities;
  $("evaluation").innerHTML = `<table>${rows}<tr><td>equity</td><td>${fmt(ev.equity)}</td></tr>`
    + `<tr><td>cubeful</td><td>${fmt(ev.cubeful_equity)}</td></tr></table>`
    + `<p>Cube: <b>${cube.action.replaceAll("_", " ")}</b> (no double ${fmt(eq.no_double)}, double/take `
    + `${fmt(eq.double_take)}, double/pass ${fmt(eq.double_drop)})</p>`;
  $("evaluation").hidden = false;
}

// ------------------------------------------------------------------ game
function drawGame() {
  const g = state.game, v = state.view;
  const typing = state.turn && g.turn === YOU && g.dice;
  const nexts = typing ? state.turn.next : [];
  const sources = [...new Set(nexts.map((s) => s[0]))];
  const targets = state.selected === null ? [] : nexts.filter((s) => s[0] === state.selected).map((s) => s[1]);
  const b = typing ? state.turn.board : v.board;
  const off = [15 - b.reduce((s, x) => s + Math.max(x, 0), 0), 15 - b.reduce((s, x) => s + Math.max(-x, 0), 0)];
  const rem = typing ? state.turn.remaining : g.dice || [];
  const used = g.dice && typing ? usedDice(g.dice, rem) : [];
  board.draw({ board: b, off, pips: typing ? pips(b) : v.pips, dice: g.dice, diceSide: g.turn, diceUsed: used,
               cube: { value: g.cube_value, owner: g.cube_owner, offered: g.phase === "doubled" },
               sources, targets, selected: state.selected, labels: ["You", "Tabla"] });
  const [a, t] = g.score;
  $("score").textContent = (g.match_length ? `${g.match_length}-point match` : "Money game")
    + `: you ${a}, Tabla ${t}` + (g.crawford ? " (Crawford game)" : "");
  $("match-id").textContent = `Position ID ${v.query.position_id} · Match ID ${v.match_id} · seed ${g.seed}`;
}

function pips(b) {
  let mine = 0, theirs = 0;
  for (let i = 1; i <= 25; i++) if (b[i] > 0) mine += i * b[i];
  for (let i = 0; i <= 24; i++) if (b[i] < 0) theirs += (25 - i) * -b[i];
  return [mine, theirs];
}

function usedDice(dice, rem) {
  if (dice[0] !== dice[1]) return [!rem.includes(dice[0]), !rem.includes(dice[1])];
  return [rem.length <= 2, rem.length === 0];
}

function resultText(g, v) {
  const kind = { 1: "", 2: " a gammon", 3: " a backgammon" }[g.result];
  const pts = `${g.points} point${g.points === 1 ? "" : "s"}`;
  const who = g.winner === YOU ? "You win" : "Tabla wins";
  const how = g.end_reason === "dropped" ? (g.winner === YOU ? "Tabla passes. " : "You pass. ") : "";
  const match = v.match_winner === null || v.match_winner === undefined ? ""
    : v.match_winner === YOU ? " You win the match!" : " Tabla wins the match.";
  return `${how}${who}${kind} (${pts}).${match}`;
}

async function applyGame(reply, animate = false) {
  const before = state.view;
  if (animate && reply.frames && reply.frames.length) {
    const side = state.game.turn;
    let prev = before.board;
    for (let k = 0; k < reply.frames.length; k++) {
      const [f, t] = reply.played_steps[k];
      const conv = (p) => (side === YOU || p === 0 || p === 25 ? p : 25 - p);
      await board.slide(prev, reply.frames[k], side, conv(f), conv(t));
      prev = reply.frames[k];
      board.draw({ board: prev, off: offOf(prev), pips: pips(prev), dice: state.game.dice, diceSide: side,
                   cube: { value: state.game.cube_value, owner: state.game.cube_owner }, labels: ["You", "Tabla"] });
    }
  }
  state.game = reply.game;
  state.view = reply.view;
  state.turn = null; state.steps = []; state.selected = null;
  drawGame();
}

function offOf(b) {
  return [15 - b.reduce((s, x) => s + Math.max(x, 0), 0), 15 - b.reduce((s, x) => s + Math.max(-x, 0), 0)];
}

const act = (action, extra = {}) => api("/game", { action, game: state.game, ...extra });
const ply = () => Number($("ply").value);

/** Whoever must act now: offer the human his buttons, or let Tabla act. */
async function proceed() {
  const g = state.game, v = state.view;
  if (g.phase === "over") {
    say(resultText(g, v));
    log(resultText(g, v));
    show(v.match_winner === null || v.match_winner === undefined ? ["next-game"] : []);
    return;
  }
  if (v.player_to_act === YOU) {
    if (g.phase === "doubled") { say(`Tabla doubles to ${2 * g.cube_value}. Take or pass?`); show(["take", "pass"]); }
    else if (g.dice) await startTurn();
    else { say("Your turn: roll" + (v.can_double ? " or double" : "")); show(v.can_double ? ["roll", "double"] : ["roll"]); }
    return;
  }
  show([]);
  await sleep(250);
  if (g.phase === "doubled") {
    const cube = await api("/cube", { ...v.query, ply: 1 });
    log(cube.take ? "Tabla takes." : "Tabla passes.");
    await sleep(400);
    await applyGame(await act(cube.take ? "take" : "drop"));
  } else if (g.dice) {
    const best = await api("/best", { ...v.query, dice: g.dice, ply: ply() });
    const reply = await act("play", { steps: best.steps });
    log(`Tabla plays ${diceText(g.dice)}: ${reply.played || "no move"}`);
    await applyGame(reply, true);
  } else {
    if (v.can_double) {
      const cube = await api("/cube", { ...v.query, ply: 1 });
      if (cube.double) {
        log(`Tabla doubles to ${2 * g.cube_value}.`);
        await applyGame(await act("double"));
        return proceed();
      }
    }
    await applyGame(await act("roll"));
  }
  return proceed();
}

async function startTurn() {
  state.steps = []; state.selected = null;
  await typed();
  const msg = `You rolled ${diceText(state.game.dice)}`;
  if (state.turn.complete && !state.turn.complete.steps.length) say(`${msg}: no legal move. Press Play.`);
  else say(`${msg}: move your checkers (click or drag)`);
}

async function typed() {
  state.turn = await api("/turn", { ...state.view.query, dice: state.game.dice, steps: state.steps });
  const done = state.turn.complete;
  show(["game-hint", ...(state.steps.length ? ["undo"] : []), ...(done ? ["submit"] : [])]);
  $("submit").textContent = done ? `Play ${done.play || "(no move)"}` : "Play";
  drawGame();
}

async function onPlace(place, how, to) {
  const g = state.game;
  if (state.mode !== "game" || !state.turn || g.turn !== YOU || !g.dice || busy > 1) return;
  const nexts = state.turn.next;
  const from = (p) => nexts.filter((s) => s[0] === p);
  if (how === "drag") {
    if (to === null || to === place) { drawGame(); return; }
    return moveChecker(place, to);
  }
  if (state.selected === null) {
    if (from(place).length) { state.selected = place; drawGame(); }
    else if (place > 0 && place <= 25 && (place === 25 ? state.turn.board[25] > 0 : state.turn.board[place] > 0)) {
      say("No legal move for that checker.", true);
    }
    return;
  }
  if (place === state.selected) { state.selected = null; drawGame(); return; }
  if (from(state.selected).some((s) => s[1] === place)) return moveChecker(state.selected, place);
  if (from(place).length) { state.selected = place; drawGame(); return; }
  state.selected = null;
  say("That move is not legal.", true);
  drawGame();
}

async function moveChecker(f, t) {
  const steps = state.turn.next.filter((s) => s[0] === f && s[1] === t).sort((a, b) => a[2] - b[2]);
  state.selected = null;
  if (!steps.length) { say("That move is not legal.", true); drawGame(); return; }
  state.steps = [...state.steps, steps[0]];
  say("");
  await typed();
}

async function newGame() {
  const text = $("seed").value.trim();
  const seed = /^\d+$/.test(text) ? Number(text) : crypto.getRandomValues(new Uint32Array(1))[0];
  $("seed").value = seed;
  state.mode = "game";
  $("hints").hidden = true; $("evaluation").hidden = true;
  const reply = await api("/game", { action: "new", seed, match_length: Number($("match-length").value),
                                     jacoby: $("jacoby").checked });
  await applyGame(reply);
  const [hi, lo] = reply.game.dice;
  $("log").replaceChildren();
  log(`New game, seed ${seed}. Opening roll ${hi}-${lo}: ${reply.game.turn === YOU ? "you play first" : "Tabla plays first"}.`);
  await sleep(500);
  await proceed();
}

// ------------------------------------------------------------------ wiring
const on = (id, fn) => $(id).addEventListener("click", () => task(fn));
on("new-game", newGame);
on("next-game", async () => { await applyGame(await act("next")); await proceed(); });
on("roll", async () => { await applyGame(await act("roll")); await proceed(); });
on("double", async () => { log("You double."); await applyGame(await act("double")); await proceed(); });
on("take", async () => { await applyGame(await act("take")); log("You take."); await proceed(); });
on("pass", async () => { await applyGame(await act("drop")); log("You pass."); await proceed(); });
on("undo", async () => { state.steps = state.steps.slice(0, -1); state.selected = null; await typed(); });
on("submit", async () => {
  const done = state.turn.complete;
  const reply = await act("play", { steps: done.steps });
  log(`You play ${diceText(state.game.dice)}: ${reply.played || "no move"}`);
  await applyGame(reply);
  await proceed();
});
on("game-hint", async () => { await hint(state.view.query, state.game.dice, 2); });
on("show", showPosition);
on("hint", async () => {
  await showPosition();
  if (!state.pos.dice) throw new ApiError("give the dice for a hint, e.g. 31");
  const reply = await hint(queryOf(state.pos), state.pos.dice, ply());
  say(`Best: ${reply.play || "(no move)"} — ${reply.why}`);
});
on("evaluate", evaluate);

const params = new URLSearchParams(location.search);
if (params.get("seed")) $("seed").value = params.get("seed");
if (params.get("id")) $("pos-input").value = params.get("id");
if (params.get("dice")) $("dice-input").value = params.get("dice");
task(showPosition).then(() => { document.body.dataset.busy = busy ? "1" : "0"; });
