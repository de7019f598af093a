"""OSWorld's setup steps and getters on the real local desktop, each checked by its effect.

Websites are local pages served inside the desktop; download URLs are served by a local
HTTP server on the host (the asset cache fetches them, the step uploads them).
"""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.errors import GetterError, NeedsCapability, SetupStepError
from pytest_osworld.evaluators.getters import GETTERS
from pytest_osworld.setup_steps import run_steps
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Step, load_task

pytestmark = pytest.mark.desktop


def _wait(probe: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A host HTTP server standing in for download URLs."""
    root = tmp_path_factory.mktemp("served")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(root), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()


@pytest.fixture
def make_ctx(desktop, tmp_path: Path) -> Callable[..., TaskContext]:
    """Restore the desktop and give a TaskContext for a small task."""

    def make(snapshot: str = "os") -> TaskContext:
        path = tmp_path / "os" / "t.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps({"id": "t", "instruction": "x", "evaluator": {"func": "infeasible"}}))
        env = desktop.restore(snapshot)
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        return TaskContext(
            task=load_task(path),
            guest=env.guest,
            assets=AssetCache(tmp_path / "cache"),
            work_dir=work,
            cdp_url=env.extra.get("chromium_cdp_url"),
        )

    return make


def steps(*items: tuple[str, dict[str, Any]]) -> list[Step]:
    return [Step(t, p, f"$.config[{i}]") for i, (t, p) in enumerate(items)]


def get(ctx: TaskContext, getter: str, **config: Any) -> Any:
    return GETTERS.get(getter)(ctx, {"type": getter, **config})


def test_download_puts_the_exact_bytes_in_the_environment(make_ctx, served) -> None:
    base, root = served
    payload = bytes(range(256)) * 40
    (root / "data.bin").write_bytes(payload)
    ctx = make_ctx()
    run_steps(
        ctx,
        steps(
            ("download", {"files": [{"url": f"{base}/data.bin", "path": "/home/user/Downloads/data.bin"}]})
        ),
    )
    assert ctx.guest.read_file("/home/user/Downloads/data.bin") == payload
    assert ctx.assets.is_cached(f"{base}/data.bin")


def test_execute_command_and_placeholders(make_ctx) -> None:
    ctx = make_ctx()
    run_steps(
        ctx,
        steps(
            (
                "execute",
                {"command": ["bash", "-c", "echo {SCREEN_WIDTH_HALF}x{SCREEN_HEIGHT_HALF} > ~/half.txt"]},
            ),
            ("command", {"command": "echo {CLIENT_PASSWORD} | sudo -S id -u > ~/sudo.txt", "shell": "true"}),
            ("execute", {"command": ["cat", "/home/user/half.txt"], "stdout": "half.out"}),
        ),
    )
    assert ctx.guest.read_file("/home/user/half.txt") == b"960x540\n"
    assert ctx.guest.read_file("/home/user/sudo.txt") == b"0\n"
    assert get(ctx, "cache_file", path="half.out").read_text() == "960x540\n"


def test_launch_open_activate_close_window(make_ctx) -> None:
    from openpyxl import Workbook

    ctx = make_ctx("libreoffice_calc")
    book = Workbook()
    book.active["A1"] = "quarterly"
    local = ctx.work_dir / "sales.xlsx"
    book.save(local)
    ctx.guest.upload_file("/home/user/sales.xlsx", local.read_bytes())
    run_steps(ctx, steps(("open", {"path": "/home/user/sales.xlsx"})))
    # open returns once a window names the file; on gnome, one `wmctrl -l` right after it
    # printed nothing at all once (a CI run, while Calc still started), so look again
    _wait(lambda: "sales" in ctx.guest.execute(["wmctrl", "-l"]).output, 10, "Calc's window in wmctrl -l")
    run_steps(ctx, steps(("launch", {"command": ["xterm", "-T", "scratch-term"]})))
    _wait(lambda: "scratch-term" in ctx.guest.execute(["wmctrl", "-l"]).output, 30, "the xterm window")
    run_steps(
        ctx, steps(("activate_window", {"window_name": "sales.xlsx - LibreOffice Calc", "strict": True}))
    )
    active = ctx.guest.execute(["xdotool", "getactivewindow", "getwindowname"]).output
    assert "sales" in active
    run_steps(ctx, steps(("close_window", {"window_name": "scratch-term"})))
    _wait(lambda: "scratch-term" not in ctx.guest.execute(["wmctrl", "-l"]).output, 30, "xterm to close")


def test_sleep_waits(make_ctx) -> None:
    ctx = make_ctx()
    start = time.monotonic()
    run_steps(ctx, steps(("sleep", {"seconds": 0.5})))
    assert time.monotonic() - start >= 0.5


def test_failing_step_names_index_and_type(make_ctx) -> None:
    ctx = make_ctx()
    with pytest.raises(SetupStepError, match=r"setup step 2/2 'open' failed: .*no-such\.docx"):
        run_steps(ctx, steps(("sleep", {"seconds": 0}), ("open", {"path": "/home/user/no-such.docx"})))


def test_google_steps_skip_with_the_reason(make_ctx) -> None:
    ctx = make_ctx()
    with pytest.raises(NeedsCapability, match="Google Drive account"):
        run_steps(ctx, steps(("googledrive", {"settings_file": "x", "operation": ["delete"], "args": [{}]})))
    with pytest.raises(NeedsCapability, match="logs in to googledrive"):
        run_steps(ctx, steps(("login", {"platform": "googledrive", "settings_file": "x"})))
    with pytest.raises(NeedsCapability, match="Google account"):
        get(ctx, "googledrive_file", settings_file="x", path=["a"], dest="a")


def test_file_and_command_getters(make_ctx) -> None:
    ctx = make_ctx()
    ctx.guest.execute(
        ["bash", "-c", "mkdir -p ~/photos/2024 && echo hi > ~/photos/a.jpg && echo x > ~/photos/2024/b.jpg"]
    )
    assert get(ctx, "vm_file", path="/home/user/photos/a.jpg", dest="a.jpg").read_text() == "hi\n"
    with pytest.raises(GetterError, match="not found in the environment"):
        get(ctx, "vm_file", path="/home/user/nope.txt", dest="nope.txt")
    assert get(ctx, "vm_command_line", command="ls ~/photos", shell=True) == "2024\na.jpg\n"
    assert "No such file" in get(ctx, "vm_command_error", command=["ls", "/nonexistent"])
    tree = get(ctx, "list_directory", path="/home/user/photos")
    names = {child["name"] for child in tree["children"]}
    assert names == {"2024", "a.jpg"}
    assert get(ctx, "vm_screen_size") == {"width": 1920, "height": 1080}
    assert "<desktop-frame" in get(ctx, "accessibility_tree")


def test_window_size_and_terminal_output(make_ctx) -> None:
    ctx = make_ctx()
    ctx.guest.launch(["gnome-terminal"])
    _wait(lambda: ctx.guest.window_size("gnome-terminal") is not None, 60, "the terminal window")
    size = get(ctx, "vm_window_size", app_class_name="gnome-terminal")
    assert size["width"] > 100 and size["height"] > 100
    ctx.guest.run_python(
        "import time\ntime.sleep(1)\npyautogui.typewrite('echo vocab-marker\\n', interval=0.02)"
    )
    assert _wait(lambda: "vocab-marker" in (ctx.guest.terminal_output() or ""), 30, "the terminal text")
    assert "vocab-marker" in get(ctx, "vm_terminal_output")


def test_wallpaper(make_ctx) -> None:
    from PIL import Image

    ctx = make_ctx()
    local = ctx.work_dir / "wall.png"
    Image.new("RGB", (64, 48), (10, 200, 30)).save(local)
    ctx.guest.upload_file("/home/user/Pictures/wall.png", local.read_bytes())
    run_steps(ctx, steps(("change_wallpaper", {"path": "/home/user/Pictures/wall.png"})))
    fetched = get(ctx, "vm_wallpaper", dest="wallpaper.png")
    assert Image.open(fetched).size == (64, 48)


PAGE = "<html><head><title>{title}</title></head><body><h1>{title}</h1></body></html>"


def _serve_pages(ctx: TaskContext, *titles: str) -> None:
    for title in titles:
        ctx.guest.upload_file(f"/home/user/site/{title}.html", PAGE.format(title=title).encode())
    ctx.guest.launch(
        ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1", "--directory", "/home/user/site"]
    )


def _start_chrome(ctx: TaskContext) -> None:
    run_steps(
        ctx,
        steps(
            ("launch", {"command": ["google-chrome", "--remote-debugging-port=1337"]}),
            ("launch", {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]}),
        ),
    )


def test_chrome_tabs_open_read_back_and_close(make_ctx) -> None:
    ctx = make_ctx("chrome")
    _serve_pages(ctx, "alpha", "beta")
    _start_chrome(ctx)
    urls = ["http://127.0.0.1:8000/alpha.html", "http://127.0.0.1:8000/beta.html"]
    run_steps(ctx, steps(("chrome_open_tabs", {"urls_to_open": urls})))
    tabs = get(ctx, "open_tabs_info")
    assert [t["url"] for t in tabs] == urls
    assert [t["title"] for t in tabs] == ["alpha", "beta"]
    run_steps(ctx, steps(("chrome_close_tabs", {"urls_to_close": [urls[0]]})))

    def one_tab_left() -> list[dict[str, str]] | None:
        tabs = get(ctx, "open_tabs_info")
        return tabs if len(tabs) == 1 else None

    assert [t["url"] for t in _wait(one_tab_left, 20, "one tab")] == [urls[1]]
    url = get(ctx, "active_url_from_accessTree", goto_prefix="http://")
    assert url.endswith("127.0.0.1:8000/beta.html")
    info = get(ctx, "page_info", url=urls[0])
    assert info["title"] == "alpha" and "<h1>alpha</h1>" in info["content"]


def test_live_web_is_refused_offline(make_ctx) -> None:
    ctx = make_ctx("chrome")
    with pytest.raises(NeedsCapability, match="live web"):
        run_steps(ctx, steps(("chrome_open_tabs", {"urls_to_open": ["https://www.example.com/"]})))


def test_browse_history_is_read_back(make_ctx) -> None:
    ctx = make_ctx("chrome")
    history = [
        {"url": "http://127.0.0.1:8000/alpha.html", "title": "alpha", "visit_time_from_now_in_seconds": 3600},
        {"url": "https://www.youtube.com/watch?v=x", "title": "video", "visit_time_from_now_in_seconds": 60},
    ]
    run_steps(ctx, steps(("update_browse_history", {"history": history})))
    rows = get(ctx, "history", dest="History.sqlite")
    urls = [row[0] for row in rows]
    assert urls == [h["url"] for h in history]


def test_chrome_preference_getters(make_ctx) -> None:
    ctx = make_ctx("chrome")
    prefs = json.loads(ctx.guest.read_file("/home/user/.config/google-chrome/Default/Preferences"))
    prefs.setdefault("profile", {})["name"] = "Thomas"
    prefs["enable_do_not_track"] = True
    prefs.setdefault("webkit", {}).setdefault("webprefs", {})["default_font_size"] = 20
    ctx.guest.upload_file("/home/user/.config/google-chrome/Default/Preferences", json.dumps(prefs).encode())
    assert get(ctx, "profile_name") == "Thomas"
    assert get(ctx, "enable_do_not_track") == "true"
    assert get(ctx, "chrome_font_size")["default_font_size"] == 20
    assert get(ctx, "enable_safe_browsing") in ("true", "false")
    assert get(ctx, "bookmarks")["bookmark_bar"]["children"] == []
    assert isinstance(get(ctx, "cookie_data", dest="Cookies"), list)


def test_shortcuts_on_desktop(make_ctx) -> None:
    ctx = make_ctx()
    ctx.guest.upload_file("/home/user/Desktop/game.desktop", b"[Desktop Entry]\nName=Puzzle\nExec=chromium\n")
    assert get(ctx, "shortcuts_on_desktop") == {
        "game.desktop": "[Desktop Entry]\nName=Puzzle\nExec=chromium\n"
    }


def test_vlc_getters(make_ctx) -> None:
    ctx = make_ctx("vlc")
    ctx.guest.execute(
        ["bash", "-c", "ffmpeg -v error -f lavfi -i testsrc=size=160x120:rate=10 -t 20 ~/Videos/clip.mp4"],
        timeout=120,
    )
    ctx.guest.launch("VLC_VERBOSE=-1 vlc --no-audio ~/Videos/clip.mp4", shell=True)

    def playing() -> Path | None:
        try:
            path = get(ctx, "vlc_playing_info", dest="status.xml")
        except GetterError:
            return None
        return path if "<state>playing</state>" in path.read_text() else None

    status = _wait(playing, 60, "VLC to play the clip")
    assert "clip.mp4" in status.read_text()
    assert "http-password=password" in get(ctx, "vlc_config", dest="vlcrc").read_text()


def test_default_video_player(make_ctx) -> None:
    ctx = make_ctx()
    assert get(ctx, "default_video_player") == "chromium.desktop"
    from pytest_osworld.evaluators.getters.apps import VIDEO_TYPES

    ctx.guest.execute(["xdg-mime", "default", "vlc.desktop", *(f"video/{t}" for t in VIDEO_TYPES)])
    assert get(ctx, "default_video_player") == "vlc.desktop"


def test_gimp_config_file(make_ctx) -> None:
    ctx = make_ctx("gimp")
    ctx.guest.upload_file("/home/user/.config/GIMP/2.10/gimprc", b'(theme "Light")\n')
    assert get(ctx, "gimp_config_file", file_name="gimprc", dest="gimprc").read_text() == '(theme "Light")\n'


def test_office_getters(make_ctx) -> None:
    from openpyxl import Workbook
    from pptx import Presentation
    from pptx.util import Inches

    ctx = make_ctx()
    book = Workbook()
    book.active.append(["name", "score"])
    book.active.append(["Ada", 95])
    book.save(ctx.work_dir / "r.xlsx")
    ctx.guest.upload_file("/home/user/r.xlsx", (ctx.work_dir / "r.xlsx").read_bytes())
    assert get(
        ctx, "content_from_vm_file", path="/home/user/r.xlsx", file_type="xlsx", file_content="last_row"
    ) == ["Ada", "95"]
    from PIL import Image

    Image.new("RGB", (20, 10), (255, 0, 0)).save(ctx.work_dir / "red.png")
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_picture(str(ctx.work_dir / "red.png"), Inches(1), Inches(1))
    deck.save(ctx.work_dir / "d.pptx")
    ctx.guest.upload_file("/home/user/d.pptx", (ctx.work_dir / "d.pptx").read_bytes())
    image = get(
        ctx, "background_image_in_slide", ppt_file_path="/home/user/d.pptx", slide_index=0, dest="bg.png"
    )
    assert Image.open(image).size == (20, 10)
    with pytest.raises(GetterError, match="no audio"):
        get(ctx, "audio_in_slide", ppt_file_path="/home/user/d.pptx", slide_index=0, dest="a.mp3")


def test_relative_time_uses_the_environment_clock_in_its_own_time_zone(make_ctx) -> None:
    ctx = make_ctx()
    rules = get(
        ctx,
        "rule_relativeTime",
        rules={"relativeTime": {"from": "tomorrow"}, "expected": {"time": "{Year}-{Month0D}-{Day0D}"}},
    )
    # The desktop's own date (its zone is not UTC), as OSWorld's VM-side now() gives.
    local_today = dt.date.fromisoformat(ctx.guest.execute(["date", "+%F"]).output.strip())
    assert rules["expected"]["time"] == (local_today + dt.timedelta(days=1)).isoformat()


#: A store page served for every path by :data:`STORE_SERVER` inside the desktop.
STORE_PAGE = (
    "<html><head><title>Acme Store</title></head><body><h1>Acme Store</h1>"
    '<span class="price">$12.50</span><ul><li class="item">Red shoe</li><li class="item">Blue shoe</li>'
    '</ul><input id="qty" value="3"><a id="help" href="/help.html">Help</a></body></html>'
)

#: A catch-all HTTP server: the same store page at any path, as a shop's URL scheme needs.
STORE_SERVER = f"""
import http.server
PAGE = {STORE_PAGE!r}.encode()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)
http.server.ThreadingHTTPServer(("127.0.0.1", 8000), Handler).serve_forever()
"""

STORE_URL = "http://127.0.0.1:8000/shop/brand/acme/onsale/item-1234?q=shoes&color=red,blue"


@pytest.fixture
def store(make_ctx) -> TaskContext:
    """Chrome showing :data:`STORE_URL` (served inside the desktop) in its only tab."""
    ctx = make_ctx("chrome")
    ctx.guest.upload_file("/home/user/store.py", STORE_SERVER.encode())
    ctx.guest.launch(["python3", "/home/user/store.py"])
    _start_chrome(ctx)
    run_steps(ctx, steps(("chrome_open_tabs", {"urls_to_open": [STORE_URL]})))
    _wait(lambda: get(ctx, "active_url_from_accessTree", goto_prefix="http://") == STORE_URL, 30, "the tab")
    return ctx


def test_url_getters_parse_the_active_tab(store: TaskContext) -> None:
    ctx = store
    prefix = {"goto_prefix": "http://"}
    assert get(
        ctx, "active_tab_url_parse", parse_keys=["q", "color", "absent"], replace={"q": "query"}, **prefix
    ) == {
        "query": "shoes",
        "color": "red,blue",
    }
    assert get(ctx, "active_tab_url_parse", parse_keys=["color"], split_list=True, **prefix) == {
        "color": ["red", "blue"]
    }
    assert get(ctx, "url_dashPart", partIndex=3, **prefix) == "acme"
    assert get(
        ctx, "url_dashPart", partIndex=5, needDeleteId=True, returnType="json", key="sku", **prefix
    ) == {"sku": "item"}
    with pytest.raises(GetterError, match="no part 9"):
        get(ctx, "url_dashPart", partIndex=9, **prefix)
    assert get(ctx, "url_path_parse", parse_keys=["shop", "brand", "onsale"], **prefix) == {
        "shop": True,
        "brand": "acme",
        "onsale": "item-1234",
    }


def test_page_getters_read_the_active_tab_over_devtools(store: TaskContext) -> None:
    ctx = store
    prefix = {"goto_prefix": "http://"}
    info = get(ctx, "active_tab_info", **prefix)
    assert info["url"] == STORE_URL and info["title"] == "Acme Store" and "$12.50" in info["content"]
    assert get(
        ctx,
        "active_tab_html_parse",
        category="class",
        class_singleObject={"price": "price"},
        class_multiObject={"item": {"0": "first", "1": "second", "5": "missing"}},
        **prefix,
    ) == {"price": "$12.50", "first": "Red shoe", "second": "Blue shoe", "missing": ""}
    assert get(ctx, "active_tab_html_parse", category="xpath", xpathObject={"//h1": "heading"}, **prefix) == {
        "heading": "Acme Store"
    }
    assert get(
        ctx, "active_tab_html_parse", category="input", inputObject={"//input[@id='qty']": "qty"}, **prefix
    ) == {"qty": "3"}
    with pytest.raises(GetterError, match="category 'label'"):
        get(ctx, "active_tab_html_parse", category="label", **prefix)
    infos = [
        {"action": "inner_text", "selector": "li.item:nth-child(2)"},
        {"action": "attribute", "selector": "a#help", "attribute": "href"},
    ]
    assert get(ctx, "info_from_website", url="http://127.0.0.1:8000/help", infos=infos) == [
        "Blue shoe",
        "/help.html",
    ]


def test_pdf_from_url_prints_the_page(store: TaskContext) -> None:
    from pypdf import PdfReader

    pdf = get(store, "pdf_from_url", path="http://127.0.0.1:8000/catalog", dest="catalog.pdf")
    assert pdf == store.work_dir / "catalog.pdf"
    text = "".join(page.extract_text() for page in PdfReader(pdf).pages)
    assert "Acme Store" in text and "$12.50" in text


def test_live_pages_are_refused_offline(make_ctx) -> None:
    ctx = make_ctx("chrome")
    for getter, config in [
        ("info_from_website", {"url": "https://www.example.com/", "infos": []}),
        ("pdf_from_url", {"path": "https://www.example.com/", "dest": "x.pdf"}),
        ("page_info", {"url": "https://www.example.com/"}),
    ]:
        with pytest.raises(NeedsCapability, match=r"live web.*no network"):
            get(ctx, getter, **config)
    with pytest.raises(NeedsCapability, match=r"recreation\.gov"):
        get(ctx, "gotoRecreationPage_and_get_html_content", selector="x")


def _write_preferences(ctx: TaskContext, name: str, update: Callable[[dict[str, Any]], None]) -> None:
    path = f"/home/user/.config/google-chrome/Default/{name}"
    try:
        data = json.loads(ctx.guest.read_file(path))
    except FileNotFoundError:
        data = {}
    update(data)
    ctx.guest.upload_file(path, json.dumps(data).encode())


def test_chrome_settings_getters_follow_the_profile(make_ctx) -> None:
    ctx = make_ctx("chrome")
    # Chrome's defaults, as the template profile has them.
    assert get(ctx, "default_search_engine") == "Google"
    assert get(ctx, "new_startup_page") == "true"
    assert get(ctx, "data_delete_automacally") == "false"
    assert get(ctx, "chrome_appearance_mode_ui") in ("system", "light")
    assert get(ctx, "find_installed_extension_name") == []
    assert get(ctx, "find_unpacked_extension_path") == []

    def change(prefs: dict[str, Any]) -> None:
        prefs["default_search_provider_data"] = {"template_url_data": {"short_name": "Bing"}}
        prefs.setdefault("session", {})["restore_on_startup"] = 1
        prefs.setdefault("profile", {}).setdefault("default_content_setting_values", {})["cookies"] = 4
        prefs.setdefault("browser", {}).setdefault("theme", {})["color_scheme2"] = 2

    def add_extensions(prefs: dict[str, Any]) -> None:
        prefs.setdefault("extensions", {})["settings"] = {
            "a" * 32: {
                "location": 4,
                "path": "/home/user/Desktop/helloExtension",
                "manifest": {"name": "Hello"},
            },
            "b" * 32: {"location": 1, "path": "b/1.0", "manifest": {"name": "Dark Reader"}},
            "c" * 32: {"location": 5, "path": "/opt/pdf", "manifest": {"name": "Chrome PDF Viewer"}},
        }

    _write_preferences(ctx, "Preferences", change)
    _write_preferences(ctx, "Secure Preferences", add_extensions)
    assert get(ctx, "default_search_engine") == "Bing"
    assert get(ctx, "new_startup_page") == "false"
    assert get(ctx, "data_delete_automacally") == "true"
    assert get(ctx, "chrome_appearance_mode_ui") == "dark"
    assert sorted(get(ctx, "find_installed_extension_name")) == ["Dark Reader", "Hello"]
    assert get(ctx, "find_unpacked_extension_path") == ["/home/user/Desktop/helloExtension"]


def test_vscode_config_runs_the_evaluation_extension(make_ctx) -> None:
    from test_tasks_vscode import INSTALLED
    from vscode_eval_extension import vsix_bytes

    if not INSTALLED:
        pytest.skip("code-server is not installed (scripts/install.sh)")
    ctx = make_ctx("vscode")
    ctx.guest.upload_file("/home/user/Downloads/eval-0.0.1.vsix", vsix_bytes())
    installed = ctx.guest.execute(["code", "--install-extension", "/home/user/Downloads/eval-0.0.1.vsix"])
    assert "successfully installed" in installed.output, installed
    ctx.guest.execute(["mkdir", "-p", "/home/user/project/.vscode"])
    ctx.guest.launch(["code", "/home/user/project"])
    _wait(
        lambda: "Visual Studio Code" in ctx.guest.execute(["wmctrl", "-l"]).output, 120, "the VS Code window"
    )
    time.sleep(5)  # the workbench loads after its window appears

    def project_reported() -> Path | None:
        path = get(
            ctx, "vscode_config", vscode_extension_command="OpenProject", path="/home/user/OpenProject.txt"
        )
        return path if path.read_text() == "project" else None

    assert _wait(project_reported, 60, "OpenProject.txt to name the folder").name == "OpenProject.txt"


def test_thunderbird_is_closed_by_osworld_exact_class(make_ctx) -> None:
    """OSWorld closes Thunderbird by the exact class ``Mail.thunderbird`` (Ubuntu's)."""
    ctx = make_ctx("thunderbird")
    ctx.guest.launch(["/usr/bin/thunderbird"])
    _wait(lambda: "Mail.thunderbird " in ctx.guest.execute(["wmctrl", "-lx"]).output, 90, "Thunderbird")
    close = {"window_name": "Mail.thunderbird", "strict": True, "by_class": True}
    run_steps(ctx, steps(("close_window", close)))
    _wait(lambda: "Mail.thunderbird" not in ctx.guest.execute(["wmctrl", "-lx"]).output, 30, "it to close")
