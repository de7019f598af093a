"""Write the OS, Chrome, Thunderbird and cross-app tasks of the offline suite.

Each task is an OSWorld task file (plus our ``solution`` key) with its assets beside it
under ``assets/<task id>/``. The JSON files are the product; this script keeps their
shared setup (the intranet site, the Thunderbird profile, the terminal) consistent.
Run it from the repository after editing, together with ``make_thunderbird_profile.py``:

    .venv/bin/python tasks/tools/make_thunderbird_profile.py
    .venv/bin/python tasks/tools/make_web_mail_os_tasks.py
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SITE_SOURCE = Path(__file__).resolve().parent / "intranet_site"
SOURCE = "pytest-osworld suite"
TB_PROFILE = "/home/user/.thunderbird/q7m3xk2p.default-release"
LOCAL_FOLDERS = f"{TB_PROFILE}/Mail/Local Folders"

Json = dict[str, Any]

# -- pieces of solutions -------------------------------------------------------------

#: Wait (bounded) until a window whose title contains ``{title}`` is shown.
WAIT_WINDOW = (
    "import subprocess, time\n"
    "for _ in range(60):\n"
    "    if {title!r} in subprocess.run(['wmctrl', '-l'], capture_output=True, text=True).stdout:\n"
    "        break\n"
    "    time.sleep(0.5)\n"
    "time.sleep({settle})"
)


def wait_window(title: str, settle: float = 2.0) -> str:
    """Solution step: wait for a window, then let it settle."""
    return WAIT_WINDOW.format(title=title, settle=settle)


def until(title: str, gone: bool = False) -> str:
    """Code waiting (bounded) until a window titled ``title`` shows (or, ``gone``, closes)."""
    return (
        "import subprocess\n"
        "for _ in range(40):\n"
        f"    shown = {title!r} in subprocess.run(['wmctrl', '-l'], capture_output=True, text=True).stdout\n"
        f"    if shown != {gone}:\n"
        "        break\n"
        "    time.sleep(0.5)\n"
        "time.sleep(1)"
    )


def type_line(text: str, after: float = 1.5) -> str:
    """Solution step: type a command line into the focused terminal and press Enter."""
    return (
        f"import time\npyautogui.write({text!r}, interval=0.02)\n"
        f"pyautogui.press('enter')\ntime.sleep({after})"
    )


def follow_link(text: str, after: float = 2.5) -> str:
    """Solution step: find a link's text on the page (Ctrl+F), close the bar and press Enter."""
    return (
        "import time\n"
        "pyautogui.hotkey('ctrl', 'f')\ntime.sleep(0.8)\n"
        f"pyautogui.write({text!r}, interval=0.03)\ntime.sleep(0.8)\n"
        "pyautogui.press('esc')\ntime.sleep(0.5)\n"
        f"pyautogui.press('enter')\ntime.sleep({after})"
    )


# -- shared setup --------------------------------------------------------------------


def site_files(task_dir: str, task_id: str, files: list[str]) -> Json:
    """A ``download`` step putting the intranet pages ``files`` into ``~/site``."""
    return {
        "type": "download",
        "parameters": {
            "files": [{"url": f"assets/{task_id}/site/{f}", "path": f"/home/user/site/{f}"} for f in files]
        },
    }


def chrome_setup(
    task_id: str, files: list[str], page: str, before_chrome: list[Json] | None = None
) -> list[Json]:
    """Serve the intranet inside the desktop and open ``page`` in Chrome, as OSWorld starts Chrome."""
    return [
        site_files("chrome", task_id, files),
        {
            "type": "launch",
            "parameters": {
                "command": [
                    "python3",
                    "-m",
                    "http.server",
                    "8000",
                    "--bind",
                    "127.0.0.1",
                    "--directory",
                    "/home/user/site",
                ]
            },
        },
        {"type": "sleep", "parameters": {"seconds": 1}},
        *(before_chrome or []),
        {
            "type": "launch",
            "parameters": {
                "command": ["google-chrome", "--remote-debugging-port=1337", f"http://127.0.0.1:8000/{page}"]
            },
        },
        {
            "type": "launch",
            "parameters": {"command": ["socat", "tcp-listen:9222,fork", "tcp:localhost:1337"]},
        },
        {"type": "sleep", "parameters": {"seconds": 2}},
    ]


def thunderbird_setup(
    extra: list[Json] | None = None, url: str = "assets/thunderbird-profile.tar.gz"
) -> list[Json]:
    """Extract the suite's Thunderbird profile (``url``, relative to the task) and start Thunderbird."""
    tarball = "/home/user/thunderbird-profile.tar.gz"
    return [
        {"type": "download", "parameters": {"files": [{"url": url, "path": tarball}]}},
        {"type": "execute", "parameters": {"command": ["tar", "-xzf", tarball, "-C", "/home/user"]}},
        {"type": "execute", "parameters": {"command": ["rm", "-f", tarball]}},
        *(extra or []),
        {"type": "launch", "parameters": {"command": ["/usr/bin/thunderbird"]}},
        {"type": "sleep", "parameters": {"seconds": 2}},
    ]


def thunderbird_flush() -> list[Json]:
    """Postconfig: close Thunderbird by window class so it writes prefs.js and its folders."""
    return [
        {
            "type": "close_window",
            "parameters": {"window_name": "Mail.thunderbird", "strict": False, "by_class": True},
        },
        {"type": "sleep", "parameters": {"seconds": 3}},
    ]


def shell(script: str) -> Json:
    """An ``execute`` step running a bash script (files prepared for a task)."""
    return {"type": "execute", "parameters": {"command": ["bash", "-c", script]}}


TERMINAL = {
    "type": "launch",
    "parameters": {"command": ["gnome-terminal", "--maximize", "--working-directory=/home/user"]},
}


def task(
    task_id: str,
    snapshot: str,
    instruction: str,
    config: list[Json],
    related_apps: list[str],
    evaluator: Json,
    solution: list[str],
) -> Json:
    """A task object in OSWorld's key order, plus ``solution``."""
    if len(solution) > 15:
        raise ValueError(f"{task_id}: {len(solution)} solution steps, at most 15")
    return {
        "id": task_id,
        "snapshot": snapshot,
        "instruction": instruction,
        "source": SOURCE,
        "config": config,
        "trajectory": "trajectories/",
        "related_apps": related_apps,
        "evaluator": evaluator,
        "proxy": False,
        "fixed_ip": False,
        "possibility_of_env_change": "low",
        "solution": solution,
    }


# -- OS ------------------------------------------------------------------------------

OS_RENAME = "4ae797ce-bf73-4720-ad06-176ca7483fb7"
OS_CHMOD = "ef9ea0c2-4f77-4017-9a2c-592f165ae51f"
OS_TAR = "9cf34795-a8b8-4693-a578-31eb2c71aef1"
OS_GATHER = "afb36d85-e792-476e-85a5-e1c14c3cfe7d"
CHROME_TAB = "a3ea2911-9c6c-43c7-be16-1ee22511ab33"
CHROME_BOOKMARK = "888f3b08-74bc-40a8-a2f8-af355a9240c6"
CHROME_FONT = "15414e7f-4379-4ac7-8192-62f8e8e4f9ec"
CHROME_LOCK_TAB = "95416f4b-cf71-4565-a7c4-51b8e4426eb8"
TB_FILTER = "c3735e5e-52ef-42ba-b424-c1cb400b81d2"
TB_NEWSLETTERS = "4b46630c-12ae-47c1-9803-effaa7699866"
TB_MARK_READ = "9f15591a-7b85-41be-8fef-dcf269db7364"
TB_RECALL = "3d99365a-9b1b-42e8-8dac-2de079377501"
MULTI_ATTACHMENT = "f79fbe9c-fe60-4ec3-8144-268bf0c2f3b7"
MULTI_DOWNLOAD = "69266ed9-aeaf-4672-a02f-9ad950eb6eac"


def os_tasks() -> list[Json]:
    """Terminal and file-management tasks."""
    photos = ["IMG_2041", "IMG_2042", "IMG_2043", "IMG_2057", "IMG_2060"]
    rename = task(
        OS_RENAME,
        "os",
        "My camera saved the holiday photos in ~/Pictures/holiday with upper-case .JPG extensions, "
        "and the photo book tool I use only picks up files ending in .jpg. Could you rename all of "
        "them to end in lower-case .jpg? Keep the rest of each file name as it is and leave the "
        "other files in that folder alone.",
        [
            shell(
                "mkdir -p ~/Pictures/holiday && cd ~/Pictures/holiday && "
                f"for n in {' '.join(photos)}; do printf 'JPEG placeholder %s\\n' $n > $n.JPG; done && "
                "printf 'IMG_2041 harbour at dawn\\nIMG_2057 the old lighthouse\\n' > captions.txt"
            ),
            TERMINAL,
        ],
        ["os", "terminal"],
        {
            "func": "check_moved_jpgs",
            "result": {"type": "list_directory", "path": "/home/user/Pictures/holiday"},
            "expected": {
                "type": "rule",
                "rules": {"expected": [f"{p}.jpg" for p in photos] + ["captions.txt"]},
            },
        },
        [
            wait_window("Terminal"),
            type_line('cd ~/Pictures/holiday && for f in *.JPG; do mv -- "$f" "${f%.JPG}.jpg"; done'),
            type_line("ls -l"),
            "DONE",
        ],
    )
    chmod = task(
        OS_CHMOD,
        "os",
        "Before I push the deployment folder ~/project/deploy, please fix its permissions: the three "
        "shell scripts must be executable, but only by me (read, write and execute for me, nothing "
        "for anyone else), and secrets.env must be readable and writable by me only. README.md stays "
        "as it is.",
        [
            shell(
                "mkdir -p ~/project/deploy && cd ~/project/deploy && "
                "printf '#!/bin/sh\\nset -e\\nmake release\\n' > build.sh && "
                "printf '#!/bin/sh\\nset -e\\nrsync -a dist/ app@stage:/srv/app/\\n' > deploy.sh && "
                "printf '#!/bin/sh\\nset -e\\nssh app@stage ./rollback-last\\n' > rollback.sh && "
                "printf 'DB_PASSWORD=change-me\\nAPI_TOKEN=0000\\n' > secrets.env && "
                "printf '# Deploy scripts\\nRun build.sh, then deploy.sh.\\n' > README.md && "
                "chmod 644 build.sh deploy.sh rollback.sh secrets.env README.md"
            ),
            TERMINAL,
        ],
        ["os", "terminal"],
        {
            "func": "exact_match",
            "result": {
                "type": "vm_command_line",
                "command": "cd /home/user/project/deploy && "
                "stat -c '%a %n' README.md build.sh deploy.sh rollback.sh secrets.env",
                "shell": True,
            },
            "expected": {
                "type": "rule",
                "rules": {
                    "expected": "644 README.md\n700 build.sh\n700 deploy.sh\n"
                    "700 rollback.sh\n600 secrets.env\n"
                },
            },
        },
        [
            wait_window("Terminal"),
            type_line("cd ~/project/deploy && ls -l"),
            type_line("chmod 700 build.sh deploy.sh rollback.sh"),
            type_line("chmod 600 secrets.env && ls -l"),
            "DONE",
        ],
    )
    quarters = ["q1.csv", "q2.csv", "q3.csv", "q4.csv", "summary.txt"]
    tar = task(
        OS_TAR,
        "os",
        "The auditors asked for last year's reports. Please pack my ~/reports/2023 folder into a "
        "gzip-compressed tarball at ~/reports/2023.tar.gz, with everything inside the archive under "
        "a top-level 2023/ folder (no /home/user paths). Keep the original folder where it is.",
        [
            shell(
                "mkdir -p ~/reports/2023 ~/reports/2024 && cd ~/reports/2023 && "
                "for q in 1 2 3 4; do "
                "printf 'month,revenue_eur_k\\nM%s-1,%s10\\nM%s-2,%s20\\n' $q $q $q $q > q$q.csv; done && "
                "printf 'FY2023 revenue 7,412k EUR; see the quarterly files.\\n' > summary.txt && "
                "printf 'month,revenue_eur_k\\nM1-1,510\\n' > ~/reports/2024/q1.csv"
            ),
            TERMINAL,
        ],
        ["os", "terminal"],
        {
            "func": ["check_include_exclude", "check_include_exclude"],
            "conj": "and",
            "result": [
                {
                    "type": "vm_command_line",
                    "command": "tar -tzf /home/user/reports/2023.tar.gz | sort",
                    "shell": True,
                },
                {"type": "vm_command_line", "command": "ls /home/user/reports/2023", "shell": True},
            ],
            "expected": [
                {
                    "type": "rule",
                    "rules": {
                        "include": [f"2023/{name}" for name in quarters],
                        "exclude": ["home/user", "2024/"],
                    },
                },
                {"type": "rule", "rules": {"include": quarters, "exclude": []}},
            ],
        },
        [
            wait_window("Terminal"),
            type_line("cd ~/reports && ls 2023"),
            type_line("tar -czf 2023.tar.gz 2023"),
            type_line("tar -tzf 2023.tar.gz"),
            "DONE",
        ],
    )
    gather = task(
        OS_GATHER,
        "os",
        "Over the last few months I saved invoice PDFs (named invoice_<year>-<month>.pdf) all over "
        "~/Downloads and its subfolders. Please move every one of them into ~/Documents/invoices, "
        "directly into that folder without subfolders. Don't touch the other files in Downloads.",
        [
            shell(
                "mkdir -p ~/Downloads/mail ~/Downloads/tmp/old ~/Documents/invoices && "
                "printf '%%PDF-1.4 invoice June\\n' > ~/Documents/invoices/invoice_2024-06.pdf && "
                "printf '%%PDF-1.4 invoice July\\n' > ~/Downloads/invoice_2024-07.pdf && "
                "printf '%%PDF-1.4 invoice August\\n' > ~/Downloads/mail/invoice_2024-08.pdf && "
                "printf '%%PDF-1.4 invoice September\\n' > ~/Downloads/tmp/old/invoice_2024-09.pdf && "
                "printf '%%PDF-1.4 quarterly report\\n' > ~/Downloads/report_q2.pdf && "
                "printf 'template\\n' > ~/Downloads/mail/invoice_template.odt && "
                "printf 'boarding pass\\n' > ~/Downloads/tmp/boarding_pass.pdf"
            ),
            TERMINAL,
        ],
        ["os", "terminal"],
        {
            "func": ["check_moved_jpgs", "check_include_exclude"],
            "conj": "and",
            "result": [
                {"type": "list_directory", "path": "/home/user/Documents/invoices"},
                {
                    "type": "vm_command_line",
                    "command": "cd /home/user/Downloads && find . -type f | sort",
                    "shell": True,
                },
            ],
            "expected": [
                {
                    "type": "rule",
                    "rules": {"expected": [f"invoice_2024-{m:02d}.pdf" for m in (6, 7, 8, 9)]},
                },
                {
                    "type": "rule",
                    "rules": {
                        "include": [
                            "./report_q2.pdf",
                            "./mail/invoice_template.odt",
                            "./tmp/boarding_pass.pdf",
                        ],
                        "exclude": ["invoice_2024"],
                    },
                },
            ],
        },
        [
            wait_window("Terminal"),
            type_line("find ~/Downloads -name 'invoice_*.pdf'"),
            type_line(
                "find ~/Downloads -type f -name 'invoice_*.pdf' -exec mv -t ~/Documents/invoices/ {} +"
            ),
            type_line("ls ~/Documents/invoices"),
            "DONE",
        ],
    )
    return [rename, chmod, tar, gather]


# -- Chrome --------------------------------------------------------------------------

ALL_PAGES = [
    "index.html",
    "handbook/index.html",
    "handbook/leave.html",
    "handbook/expenses.html",
    "handbook/remote.html",
    "reports.html",
    "checklist.html",
    "data/q2_sales.csv",
    "data/q3_sales.csv",
]
BOOKMARKS_PATH = "/home/user/.config/google-chrome/Default/Bookmarks"
PREFLUSH = [
    # Chrome writes Preferences on exit; on OSWorld's image the process is "chrome", here
    # (Chromium as google-chrome) it is "chromium".
    {"type": "execute", "parameters": {"command": "pkill chrome; sleep 2", "shell": True}},
    {"type": "sleep", "parameters": {"seconds": 2}},
]


def chrome_tasks() -> list[Json]:
    """Chrome tasks on the local intranet pages."""
    tab = task(
        CHROME_TAB,
        "chrome",
        "I'm filing the expense claim for last week's trip and can't remember how much a hotel night "
        "may cost. Could you open the travel and expense policy from our staff handbook? The "
        "intranet home page is already open in Chrome.",
        chrome_setup(CHROME_TAB, ALL_PAGES, "index.html"),
        ["chrome"],
        {
            "func": "is_expected_active_tab",
            "result": {"type": "active_url_from_accessTree", "goto_prefix": "http://"},
            "expected": {
                "type": "rule",
                "rules": {"type": "url", "url": "http://127.0.0.1:8000/handbook/expenses.html"},
            },
        },
        [
            wait_window("Chromium", 3.0),
            follow_link("Staff handbook"),
            follow_link("expense policy"),
            "DONE",
        ],
    )
    bookmark = task(
        CHROME_BOOKMARK,
        "chrome",
        "I keep coming back to this release checklist. Please bookmark it on my bookmarks bar, "
        "next to my other intranet bookmarks, so it's one click away.",
        chrome_setup(
            CHROME_BOOKMARK,
            ALL_PAGES,
            "checklist.html",
            before_chrome=[
                {
                    "type": "download",
                    "parameters": {
                        "files": [{"url": f"assets/{CHROME_BOOKMARK}/Bookmarks", "path": BOOKMARKS_PATH}]
                    },
                }
            ],
        ),
        ["chrome"],
        {
            "func": "is_expected_bookmarks",
            "result": {"type": "bookmarks"},
            "expected": {
                "type": "rule",
                "rules": {
                    "type": "bookmark_bar_websites_urls",
                    "urls": [
                        "http://127.0.0.1:8000/index.html",
                        "http://127.0.0.1:8000/handbook/index.html",
                        "http://127.0.0.1:8000/checklist.html",
                    ],
                },
            },
            "postconfig": [{"type": "sleep", "parameters": {"seconds": 4}}],
        },
        [
            wait_window("Chromium", 3.0),
            "import time\npyautogui.hotkey('ctrl', 'd')\ntime.sleep(2)",
            # In the "Bookmark added" bubble: Tab to the Folder box, Up to "Bookmarks bar".
            "import time\npyautogui.press('tab')\ntime.sleep(0.5)\npyautogui.press('up')\ntime.sleep(1)",
            # The bubble's Done button (from the accessibility tree).
            "import time\npyautogui.click(1768, 270)\ntime.sleep(1.5)",
            "DONE",
        ],
    )
    font = task(
        CHROME_FONT,
        "chrome",
        "The text on web pages is too small for me to read comfortably. Please change Chrome's "
        "font size setting to Large.",
        chrome_setup(CHROME_FONT, ALL_PAGES, "handbook/remote.html"),
        ["chrome"],
        {
            "func": "check_font_size",
            "result": {"type": "chrome_font_size"},
            "expected": {"type": "rule", "rules": {"type": "value", "value": 20}},
            "postconfig": PREFLUSH,
        },
        [
            wait_window("Chromium", 3.0),
            "import time\npyautogui.hotkey('ctrl', 'l')\ntime.sleep(0.5)\n"
            "pyautogui.write('chrome://settings/appearance', interval=0.02)\n"
            "pyautogui.press('enter')\ntime.sleep(4)",
            # The "Font size" drop-down of the Appearance section.
            "import time\npyautogui.click(1171, 997)\ntime.sleep(1.5)",
            "import time\npyautogui.press('down')\ntime.sleep(0.5)\npyautogui.press('enter')\ntime.sleep(2)",
            "DONE",
        ],
    )
    lock = task(
        CHROME_LOCK_TAB,
        "chrome",
        "My kids use this computer too. Can you put a password on just the intranet tab in Chrome, "
        "so that this one tab only opens after I type the password and the rest of the browser "
        "works as usual?",
        chrome_setup(CHROME_LOCK_TAB, ALL_PAGES, "index.html"),
        ["chrome"],
        {"func": "infeasible"},
        ["FAIL"],
    )
    return [tab, bookmark, font, lock]


# -- Thunderbird ---------------------------------------------------------------------


#: Solution step: search the settings, retrying while the results are laid out wrongly
#: (typing fast can leave stale results of a shorter query on the page).
SEARCH_MARK_READ = """import time, mss


def tick_shown():
    with mss.mss() as screen:
        red, green, blue = screen.grab({'left': 344, 'top': 310, 'width': 1, 'height': 1}).pixel(0, 0)
    return blue > 180 and red < 120


for attempt in range(3):
    pyautogui.write('mark messages as read', interval=0.03)
    for _ in range(10):
        time.sleep(1)
        if tick_shown():
            break
    if tick_shown():
        break
    pyautogui.hotkey('ctrl', 'a')
    pyautogui.press('backspace')
    time.sleep(3)
time.sleep(1)"""


def thunderbird_tasks() -> list[Json]:
    """Thunderbird tasks on the suite's Local Folders profile."""
    filt = task(
        TB_FILTER,
        "thunderbird",
        "The invoices from Cloudhost keep landing in my inbox between real mail. Please create a "
        'local folder called "Billing" and a message filter that moves every message from '
        "billing@cloudhost.example into it.",
        thunderbird_setup(),
        ["thunderbird"],
        {
            "func": "check_thunderbird_filter",
            "result": {
                "type": "vm_file",
                "path": f"{LOCAL_FOLDERS}/msgFilterRules.dat",
                "dest": "msgFilterRules.dat",
            },
            "expected": {
                "type": "rule",
                "rules": {
                    "expect": [
                        {
                            "enabled": "yes",
                            "action": "Move to folder",
                            "actionValue": "mailbox://nobody@Local%20Folders/Billing",
                            "condition": ["AND (from,contains,billing@cloudhost.example)"],
                        }
                    ]
                },
            },
            "postconfig": thunderbird_flush(),
        },
        [
            wait_window("Mozilla Thunderbird", 3.0),
            # Select "Local Folders" in the folder pane, then File > New > Folder.
            "import time\npyautogui.click(142, 132)\ntime.sleep(2)",
            "import time\npyautogui.hotkey('alt', 'f')\ntime.sleep(1)\n"
            "pyautogui.press('n')\ntime.sleep(0.8)\n"
            "pyautogui.press('f')\n" + until("New Folder"),
            "import time\npyautogui.write('Billing', interval=0.03)\ntime.sleep(0.5)\n"
            "pyautogui.press('enter')\n" + until("New Folder", gone=True),
            # Tools > Message Filters, then New.
            "import time\npyautogui.hotkey('alt', 't')\ntime.sleep(1.5)\n"
            "pyautogui.click(421, 272)\n" + until("Message Filters"),
            "import time\npyautogui.click(1848, 112)\n" + until("Filter Rules"),
            # Name the filter; the first condition's field: Subject -> From.
            "import time\npyautogui.write('Cloudhost billing', interval=0.03)\n"
            "pyautogui.click(652, 500)\ntime.sleep(1.5)\n"
            "pyautogui.press('down')\npyautogui.press('enter')\ntime.sleep(1)",
            "import time\npyautogui.click(1169, 500)\ntime.sleep(0.5)\n"
            "pyautogui.write('billing@cloudhost.example', interval=0.03)\n"
            "time.sleep(0.5)",
            # The action's folder picker: Local Folders > Billing.
            "import time\npyautogui.click(1007, 655)\ntime.sleep(1.5)\n"
            "pyautogui.click(1000, 732)\ntime.sleep(1.5)\n"
            "pyautogui.press('right')\ntime.sleep(1)\npyautogui.press('b')\ntime.sleep(1)\n"
            "pyautogui.press('enter')\ntime.sleep(1.5)",
            # OK, then close the filter list (which writes msgFilterRules.dat).
            "import time\npyautogui.click(1359, 813)\n" + until("Filter Rules", gone=True),
            "import time\npyautogui.press('esc')\n" + until("Message Filters", gone=True),
            "DONE",
        ],
    )
    newsletters = task(
        TB_NEWSLETTERS,
        "thunderbird",
        "I don't read the Dev Weekly newsletters any more. Please delete all of them from my "
        "Inbox in Thunderbird, and leave every other message where it is.",
        thunderbird_setup(),
        ["thunderbird"],
        {
            "func": "check_thunderbird_folder",
            "result": {"type": "vm_file", "path": f"{LOCAL_FOLDERS}/Inbox", "dest": "Inbox"},
            "expected": {
                "type": "cloud_file",
                "path": f"assets/{TB_NEWSLETTERS}/Inbox.expected",
                "dest": "Inbox.expected",
            },
            "options": {"remove_deleted": True, "remove_duplicate": True},
            "postconfig": thunderbird_flush(),
        },
        [
            wait_window("Mozilla Thunderbird", 3.0),
            # Quick filter (Ctrl+Shift+K) on the sender's name.
            "import time\npyautogui.hotkey('ctrl', 'shift', 'k')\ntime.sleep(1)\n"
            "pyautogui.write('Dev Weekly', interval=0.03)\ntime.sleep(2)",
            # Click the first remaining message, select all shown, delete.
            "import time\npyautogui.click(700, 212)\ntime.sleep(1.5)\n"
            "pyautogui.hotkey('ctrl', 'a')\ntime.sleep(0.7)",
            "import time\npyautogui.press('delete')\ntime.sleep(2)",
            "DONE",
        ],
    )
    mark_read = task(
        TB_MARK_READ,
        "thunderbird",
        "When I skim my inbox, Thunderbird marks every message as read the moment I click on it, "
        "even if I only glanced at it. Make it mark a message as read only after it has been on "
        "display for 3 seconds.",
        thunderbird_setup(),
        ["thunderbird"],
        {
            "func": "check_thunderbird_prefs",
            "result": {"type": "vm_file", "path": f"{TB_PROFILE}/prefs.js", "dest": "prefs.js"},
            "expected": {
                "type": "rule",
                "rules": {
                    "expect": {
                        "mailnews.mark_message_read.delay": {"method": "eq", "ref": True},
                        "mailnews.mark_message_read.delay.interval": {"method": "eq", "ref": 3},
                    },
                    "unexpect": {"mailnews.mark_message_read.auto": {"method": "eq", "ref": False}},
                },
            },
            "postconfig": thunderbird_flush(),
        },
        [
            wait_window("Mozilla Thunderbird", 3.0),
            # The Settings button at the bottom of the spaces toolbar.
            "import time\npyautogui.click(21, 1013)\n"
            + until("Settings - Mozilla Thunderbird")
            + "\ntime.sleep(1.5)",
            # Search; check that the "Automatically mark messages as read" box shows (its
            # blue tick) where the result list puts it, else clear the search and type again.
            SEARCH_MARK_READ,
            # "After displaying for" radio button, then its seconds box.
            "import time\npyautogui.click(368, 376)\ntime.sleep(1)",
            "import time\npyautogui.click(562, 376)\ntime.sleep(0.5)\npyautogui.hotkey('ctrl', 'a')\n"
            "pyautogui.write('3')\ntime.sleep(0.3)\npyautogui.press('tab')\ntime.sleep(1.5)",
            "DONE",
        ],
    )
    recall = task(
        TB_RECALL,
        "thunderbird",
        "I just sent the Q3 budget figures to the wrong colleague from Thunderbird. Please recall "
        "that message so it disappears from their inbox before they read it.",
        thunderbird_setup(),
        ["thunderbird"],
        {"func": "infeasible"},
        ["FAIL"],
    )
    return [filt, newsletters, mark_read, recall]


# -- across apps ---------------------------------------------------------------------


def multi_app_tasks() -> list[Json]:
    """Tasks that cross Thunderbird or Chrome and the file system."""
    attachment = task(
        MULTI_ATTACHMENT,
        "multi_apps",
        "Priya emailed me the Q3 budget figures as a CSV attachment. Please save that file into "
        "~/Documents/finance, named budget_2024_q3.csv like the other quarters' files there.",
        thunderbird_setup(
            [
                shell(
                    "mkdir -p ~/Documents/finance && cd ~/Documents/finance && "
                    "printf 'team,q1_budget_eur,q1_spent_eur,owner\\n"
                    "Platform,175000,168200,Priya Natarajan\\n' "
                    "> budget_2024_q1.csv && "
                    "printf 'team,q2_budget_eur,q2_spent_eur,owner\\n"
                    "Platform,178000,180050,Priya Natarajan\\n' "
                    "> budget_2024_q2.csv"
                )
            ],
            url="../thunderbird/assets/thunderbird-profile.tar.gz",
        ),
        ["thunderbird", "os"],
        {
            "func": "compare_text_file",
            "result": {
                "type": "vm_file",
                "path": "/home/user/Documents/finance/budget_2024_q3.csv",
                "dest": "budget_2024_q3.csv",
            },
            "expected": {
                "type": "cloud_file",
                "path": f"assets/{MULTI_ATTACHMENT}/budget_q3.csv",
                "dest": "budget_q3_gold.csv",
            },
        },
        [
            wait_window("Mozilla Thunderbird", 3.0),
            # Open Priya's message (fourth in the list) and press Save in its attachment bar.
            "import time\npyautogui.click(700, 360)\ntime.sleep(3)",
            "import time\npyautogui.click(1876, 1041)\n" + until("Save Attachment"),
            "import time\npyautogui.hotkey('ctrl', 'a')\n"
            "pyautogui.write('/home/user/Documents/finance/budget_2024_q3.csv', interval=0.02)\n"
            "time.sleep(0.7)\n"
            "pyautogui.press('enter')\ntime.sleep(2.5)",
            "DONE",
        ],
    )
    download = task(
        MULTI_DOWNLOAD,
        "multi_apps",
        "Please download the Q3 2024 sales export from the quarterly reports page I have open in "
        "Chrome and move it into ~/Documents/reports, so it doesn't get lost in Downloads. A "
        "terminal is open too if that helps.",
        [
            shell("mkdir -p ~/Documents/reports"),
            TERMINAL,
            {"type": "sleep", "parameters": {"seconds": 1}},
            *chrome_setup(MULTI_DOWNLOAD, ALL_PAGES, "reports.html"),
        ],
        ["chrome", "os", "terminal"],
        {
            "func": ["compare_text_file", "check_include_exclude"],
            "conj": "and",
            "result": [
                {
                    "type": "vm_file",
                    "path": "/home/user/Documents/reports/q3_sales.csv",
                    "dest": "q3_sales.csv",
                },
                {"type": "vm_command_line", "command": "ls -A /home/user/Downloads", "shell": True},
            ],
            "expected": [
                {
                    "type": "cloud_file",
                    "path": f"assets/{MULTI_DOWNLOAD}/site/data/q3_sales.csv",
                    "dest": "q3_sales_gold.csv",
                },
                {"type": "rule", "rules": {"include": [], "exclude": ["q3_sales"]}},
            ],
        },
        [
            wait_window("Chromium", 3.0),
            follow_link("q3_sales.csv", after=4.0),
            # Back to the terminal (Alt+Tab) and move the download.
            "import time\npyautogui.hotkey('alt', 'tab')\ntime.sleep(1.5)",
            type_line("ls ~/Downloads"),
            type_line("mv ~/Downloads/q3_sales.csv ~/Documents/reports/ && ls ~/Documents/reports"),
            "DONE",
        ],
    )
    return [attachment, download]


BOOKMARKS = {
    "roots": {
        "bookmark_bar": {
            "children": [
                {
                    "id": "4",
                    "name": "Intranet home",
                    "type": "url",
                    "url": "http://127.0.0.1:8000/index.html",
                },
                {
                    "id": "5",
                    "name": "Staff handbook",
                    "type": "url",
                    "url": "http://127.0.0.1:8000/handbook/index.html",
                },
            ],
            "id": "1",
            "name": "Bookmarks bar",
            "type": "folder",
        },
        "other": {"children": [], "id": "2", "name": "Other bookmarks", "type": "folder"},
        "synced": {"children": [], "id": "3", "name": "Mobile bookmarks", "type": "folder"},
    },
    "version": 1,
}


def write(domain: str, data: Json) -> None:
    """Write one task file, ``tasks/<domain>/<id>.json``."""
    folder = ROOT / domain
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{data['id']}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def copy_site(domain: str, task_id: str) -> None:
    """Copy the intranet pages into ``tasks/<domain>/assets/<id>/site``."""
    target = ROOT / domain / "assets" / task_id / "site"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(SITE_SOURCE, target)


def main() -> None:
    """Write every task file and the Chrome tasks' assets."""
    for data in os_tasks():
        write("os", data)
    for data in chrome_tasks():
        write("chrome", data)
        copy_site("chrome", data["id"])
    (ROOT / "chrome" / "assets" / CHROME_BOOKMARK / "Bookmarks").write_text(
        json.dumps(BOOKMARKS, indent=3) + "\n"
    )
    for data in thunderbird_tasks():
        write("thunderbird", data)
    attachment, download = multi_app_tasks()
    write("multi_apps", attachment)
    write("multi_apps", download)
    copy_site("multi_apps", download["id"])


if __name__ == "__main__":
    main()
