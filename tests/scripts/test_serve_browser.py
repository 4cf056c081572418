"""The board page in a real headless Chromium (selenium): it loads without console errors,
draws the start position, shows the hints of the opening 3-1, plays three full turns
against Tabla accepting only legal moves, and handles a double.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium
chromium-driver``); skipped with that message where they are absent. A screenshot of the
board is written to ``$TABLA_ARTIFACTS/serve_board.png`` (default ``/tmp/tabla-artifacts``).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time

import pytest

from serve_helpers import START, live_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = os.environ.get("TABLA_ARTIFACTS", "/tmp/tabla-artifacts")
SCREENSHOT = os.path.join(ARTIFACTS, "serve_board.png")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)),
                       reason="chromium and chromedriver are not installed (apt-get install -y chromium chromium-driver)"),
]
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with live_server("--workers", "2") as (base, _):
        yield base


@pytest.fixture(scope="module")
def driver():
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="tabla-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1300,1000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(60)
    try:
        yield d
    finally:
        d.quit()
        shutil.rmtree(profile, ignore_errors=True)


def idle(d, timeout: float = 90) -> None:
    """Wait until the page has no request or animation in progress."""
    time.sleep(0.05)
    WebDriverWait(d, timeout, poll_frequency=0.05).until(
        lambda d: d.execute_script("return document.body.dataset.busy") == "0")


def state(d) -> dict:
    return d.execute_script("return window.tabla.state")


def severe(d) -> list[dict]:
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE"]


def open_page(d, base: str, query: str = "") -> None:
    d.get(f"{base}/{query}")
    idle(d)


def checkers(d) -> dict[tuple[int, int], int]:
    """(side, point in the bottom player's numbering) → checkers drawn there."""
    out: dict[tuple[int, int], int] = {}
    for c in d.find_elements(By.CSS_SELECTOR, "#board circle.checker:not(.moving)"):
        key = (int(c.get_attribute("data-side")), int(c.get_attribute("data-point")))
        out[key] = out.get(key, 0) + 1
    return out


def click_place(d, place: int) -> None:
    """Click the movable checker on ``place`` if there is one, else the point / bar / tray."""
    movable = d.find_elements(By.CSS_SELECTOR, f"#board circle.movable[data-place='{place}']")
    node = movable[0] if movable else d.find_element(By.CSS_SELECTOR, f"#board [data-place='{place}']:not(circle)")
    ActionChains(d).move_to_element(node).click().perform()
    idle(d)


def drag(d, src: int, dst: int) -> None:
    node = d.find_element(By.CSS_SELECTOR, f"#board circle.movable[data-place='{src}']")
    target = d.find_element(By.CSS_SELECTOR, f"#board [data-place='{dst}']:not(circle)")
    ActionChains(d).click_and_hold(node).move_by_offset(8, 8).move_to_element(target).release().perform()
    idle(d)


def button(d, name: str):
    return d.find_element(By.ID, name)


def visible(d, name: str) -> bool:
    return button(d, name).is_displayed()


# --------------------------------------------------------------------------- tests
def test_the_page_loads_without_console_errors_and_draws_the_start_position(server, driver):
    open_page(driver, server)
    assert severe(driver) == []
    drawn = checkers(driver)
    bottom = {(0, p): n for p, n in {24: 2, 13: 5, 8: 3, 6: 5}.items()}
    top = {(1, 25 - p): n for p, n in {24: 2, 13: 5, 8: 3, 6: 5}.items()}  # his points, our numbering
    assert drawn == {**bottom, **top}
    assert sum(n for (side, _), n in drawn.items() if side == 0) == 15
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#board text.pips")] == [
        "on roll: 167 pips", "opponent: 167 pips"]
    cube = driver.find_element(By.CSS_SELECTOR, "#board g.cube")
    assert cube.get_attribute("data-value") == "1" and cube.get_attribute("data-owner") == "centre"


def test_the_hints_for_the_opening_3_1_put_8_5_6_5_first(server, driver):
    open_page(driver, server)
    field = driver.find_element(By.ID, "pos-input")
    field.clear()
    field.send_keys(START)
    driver.find_element(By.ID, "dice-input").send_keys("31")
    button(driver, "hint").click()
    idle(driver)
    rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in driver.find_elements(By.CSS_SELECTOR, "#hints tbody tr")]
    assert len(rows) == 5 and rows[0][1] == "8/5 6/5"
    assert float(rows[0][2]) > float(rows[1][2]) and rows[1][3].startswith("-")
    assert "makes the 5-point" in rows[0][4]
    assert driver.find_element(By.CSS_SELECTOR, "#board g.dice").get_attribute("data-dice") == "3,1"
    assert severe(driver) == []


def _legal_plays(base: str, query: dict, dice: list[int]) -> set[str]:
    import httpx

    r = httpx.post(base + "/legal", json={**query, "dice": dice}, timeout=30).json()
    return {p["play"] for p in r["plays"]}


def _play_human_turn(d, base: str, use_drag: bool) -> str:
    """Roll if needed, try illegal moves (refused), then make a legal play and submit it."""
    if visible(d, "roll"):
        button(d, "roll").click()
        idle(d)
    s = state(d)
    assert s["game"]["turn"] == 0 and s["game"]["dice"] and s["turn"] is not None
    query, dice = s["view"]["query"], s["game"]["dice"]
    legal = _legal_plays(base, query, dice)
    nexts = s["turn"]["next"]
    sources = {n[0] for n in nexts}
    board = s["turn"]["board"]
    stuck = [p for p in range(1, 25) if board[p] > 0 and p not in sources]
    if stuck:  # a checker that cannot move is not taken
        click_place(d, stuck[0])
        assert "No legal move" in d.find_element(By.ID, "message").text and state(d)["steps"] == []
    if nexts:  # a destination that no die reaches is refused
        f = nexts[0][0]
        wrong = next(p for p in range(1, 25) if p not in {n[1] for n in nexts if n[0] == f} and p != f
                     and p not in sources)
        click_place(d, f)
        click_place(d, wrong)
        assert d.find_element(By.ID, "message").text == "That move is not legal." and state(d)["steps"] == []
    k = 0
    while (s := state(d))["turn"]["complete"] is None:
        f, t, _ = s["turn"]["next"][0]
        if use_drag and k == 0 and t != 0:
            drag(d, f, t)
        else:
            click_place(d, f)
            click_place(d, t)
        k += 1
        assert len(state(d)["steps"]) == k, "a legal move must be accepted"
    if k:
        button(d, "undo").click()  # undo takes the last move back, and it is made again
        idle(d)
        assert len(state(d)["steps"]) == k - 1
        f, t, _ = state(d)["turn"]["next"][0]
        click_place(d, f)
        click_place(d, t)
    done = state(d)["turn"]["complete"]
    assert done["play"] in legal or (done["play"] == "" and "" in legal)
    button(d, "submit").click()
    idle(d)
    return done["play"]


def _take_if_doubled(d) -> None:
    """Take when Tabla doubled instead of rolling (then Tabla rolls and plays)."""
    if state(d)["game"]["phase"] == "doubled":
        assert visible(d, "take") and visible(d, "pass")
        assert d.find_element(By.CSS_SELECTOR, "#board g.cube").get_attribute("data-offered") == "1"
        button(d, "take").click()
        idle(d)
        g = state(d)["game"]
        assert g["cube_owner"] == 0 and g["cube_value"] >= 2


def _start_game(d, base: str, seed: int) -> None:
    open_page(d, base, f"?seed={seed}")
    button(d, "new-game").click()
    idle(d)


def test_three_full_turns_against_tabla_accept_only_legal_moves(server, driver):
    os.makedirs(ARTIFACTS, exist_ok=True)
    _start_game(driver, server, seed=12)
    played = []
    for turn in range(3):
        s = state(driver)
        assert s["game"]["phase"] == "roll" and s["view"]["player_to_act"] == 0, s["game"]
        played.append(_play_human_turn(driver, server, use_drag=turn == 1))
        _take_if_doubled(driver)
        s = state(driver)
        assert s["view"]["player_to_act"] == 0 and s["game"]["dice"] is None, s["game"]
    log = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#log li")]
    assert sum(line.startswith("You play") for line in log) == 3
    assert sum(line.startswith("Tabla plays") for line in log) >= 3
    driver.save_screenshot(SCREENSHOT)
    assert os.path.getsize(SCREENSHOT) > 10_000
    assert severe(driver) == []


def test_a_double_is_taken_or_passed_and_the_board_shows_it(server, driver):
    _start_game(driver, server, seed=3)
    while not visible(driver, "double"):
        _play_human_turn(driver, server, use_drag=False)
        _take_if_doubled(driver)
    button(driver, "double").click()
    idle(driver)
    s = state(driver)
    g = s["game"]
    cube = driver.find_element(By.CSS_SELECTOR, "#board g.cube")
    if g["phase"] == "over":
        assert g["winner"] == 0 and g["end_reason"] == "dropped" and g["points"] == 1
        assert "Tabla passes" in driver.find_element(By.ID, "message").text
    else:
        assert g["cube_value"] == 2 and g["cube_owner"] == 1
        assert cube.get_attribute("data-value") == "2" and cube.get_attribute("data-owner") == "1"
        assert "Tabla takes." in [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#log li")]
        assert not visible(driver, "double")  # Tabla owns the cube now
    assert severe(driver) == []
