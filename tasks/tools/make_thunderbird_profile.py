"""Build the Thunderbird profile of the offline task suite, deterministically.

The profile has no mail account and needs no network: only "Local Folders", whose Inbox
holds a handful of work messages (one with a CSV attachment). Run from the repository:

    .venv/bin/python tasks/tools/make_thunderbird_profile.py

It writes ``tasks/thunderbird/assets/thunderbird-profile.tar.gz`` (extracted over
``/home/user`` by the tasks' setup) and the gold files of the tasks that compare a mail
folder or an attachment. Every byte is a function of this script: fixed dates, fixed
mtimes and a gzip header without a time stamp, so running it twice gives the same files.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import tarfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "tasks"
TB_ASSETS = ROOT / "thunderbird" / "assets"
PROFILE_TARBALL = TB_ASSETS / "thunderbird-profile.tar.gz"
#: The profile folder, under ``~/.thunderbird``.
PROFILE_DIR = "q7m3xk2p.default-release"
#: Thunderbird's install hash of ``/usr/lib/thunderbird`` (Debian's package), as written
#: to ``installs.ini`` by a first start; with it the profile is the install's default.
INSTALL_HASH = "FDC34C9F024745EB"
#: 2024-10-01 00:00 UTC: the mtime of every file in the tarball.
MTIME = 1_727_740_800

#: Task ids whose gold files this script writes.
NEWSLETTER_TASK = "4b46630c-12ae-47c1-9803-effaa7699866"
ATTACHMENT_TASK = "f79fbe9c-fe60-4ec3-8144-268bf0c2f3b7"

BUDGET_CSV = textwrap.dedent(
    """\
    team,q3_budget_eur,q3_spent_eur,owner
    Platform,182000,171450,Priya Natarajan
    Data,96000,99210,Lena Fischer
    Mobile,74000,61980,Marco Rossi
    Support,41000,40120,Aisha Bello
    """
)

PREFS = {
    "mail.account.account1.server": "server1",
    "mail.accountmanager.accounts": "account1",
    "mail.accountmanager.localfoldersserver": "server1",
    "mail.server.server1.directory-rel": "[ProfD]Mail/Local Folders",
    "mail.server.server1.hostname": "Local Folders",
    "mail.server.server1.name": "Local Folders",
    "mail.server.server1.type": "none",
    "mail.server.server1.userName": "nobody",
    "mail.server.server1.storeContractID": "@mozilla.org/msgstore/berkeleystore;1",
    # First-run prompts, default-client check, telemetry and update checks off.
    "mail.provider.suppress_dialog_on_startup": True,
    "mail.shell.checkDefaultClient": False,
    "mail.spotlight.firstRunDone": True,
    "mail.winsearch.firstRunDone": True,
    "mail.rights.version": 1,
    "mailnews.start_page.enabled": False,
    "mail.startup.enabledMailCheckOnce": True,
    "mail.inappnotifications.enabled": False,
    "app.donation.eoy.version.viewed": 999,
    "app.update.auto": False,
    "app.update.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.policy.dataSubmissionPolicyBypassNotification": True,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "browser.shell.checkDefaultBrowser": False,
    "mailnews.auto_config_url": "",
    "extensions.getAddons.cache.enabled": False,
}


XULSTORE = {"chrome://messenger/content/messenger.xhtml": {"messengerWindow": {"sizemode": "maximized"}}}
SESSION = {
    "rev": 0,
    "windows": [
        {
            "type": "3pane",
            "tabs": {
                "rev": 0,
                "selectedIndex": 0,
                "tabs": [
                    {
                        "mode": "mail3PaneTab",
                        "state": {
                            "firstTab": True,
                            "folderPaneVisible": True,
                            "folderURI": "mailbox://nobody@Local%20Folders/Inbox",
                            "messagePaneVisible": True,
                        },
                        "ext": {},
                    }
                ],
            },
        }
    ],
}


@dataclass(frozen=True)
class Mail:
    """One message of the Inbox."""

    sender: str
    subject: str
    date: str
    body: str
    message_id: str
    attachment: tuple[str, str] | None = None


INBOX = [
    Mail(
        "Cloudhost Billing <billing@cloudhost.example>",
        "Your invoice INV-20431 for August",
        "Mon, 02 Sep 2024 06:12:00 +0000",
        "Hello,\n\nyour invoice INV-20431 (EUR 1,284.00) for August 2024 is ready.\n"
        "It will be charged to the card ending in 4417 on 9 September.\n\nCloudhost Billing\n",
        "inv-20431@cloudhost.example",
    ),
    Mail(
        "Dev Weekly <news@devweekly.example>",
        "Dev Weekly #212: faster CI caches",
        "Tue, 03 Sep 2024 07:00:00 +0000",
        "This week: cache keys that survive dependency bumps, a look at\n"
        "structured logging, and ten links we liked.\n\nUnsubscribe: reply STOP.\n",
        "dw212@devweekly.example",
    ),
    Mail(
        "Marco Rossi <marco.rossi@northwind-labs.example>",
        "Lunch on Thursday?",
        "Tue, 03 Sep 2024 11:41:00 +0000",
        "Hi,\n\nare you free for lunch on Thursday? The new place by the station\n"
        "opens at 12. I can book a table for four.\n\nMarco\n",
        "a81c2f@northwind-labs.example",
    ),
    Mail(
        "IT Helpdesk <helpdesk@northwind-labs.example>",
        "Scheduled maintenance this weekend",
        "Wed, 04 Sep 2024 15:20:00 +0000",
        "Dear colleagues,\n\nthe VPN and the file server will be unavailable on Saturday\n"
        "between 08:00 and 14:00 for maintenance.\n\nIT Helpdesk\n",
        "maint-0904@northwind-labs.example",
    ),
    Mail(
        "Priya Natarajan <priya.natarajan@northwind-labs.example>",
        "Q3 budget figures",
        "Thu, 05 Sep 2024 09:03:00 +0000",
        "Hi,\n\nattached are the Q3 budget figures per team, as discussed in\n"
        "yesterday's meeting. Data is slightly over; let's talk on Monday.\n\nPriya\n",
        "q3-budget-77@northwind-labs.example",
        ("budget_q3.csv", BUDGET_CSV),
    ),
    Mail(
        "Dev Weekly <news@devweekly.example>",
        "Dev Weekly #213: release trains",
        "Tue, 10 Sep 2024 07:00:00 +0000",
        "This week: shipping on a fixed schedule, feature flags that clean\n"
        "up after themselves, and a new profiler.\n\nUnsubscribe: reply STOP.\n",
        "dw213@devweekly.example",
    ),
    Mail(
        "Lena Fischer <lena.fischer@northwind-labs.example>",
        "Re: Conference travel",
        "Wed, 11 Sep 2024 13:27:00 +0000",
        "Hi,\n\nthe hotel is confirmed for 14-17 October. I booked the 07:40 train;\n"
        "tell me if you want a seat next to mine.\n\nLena\n",
        "travel-3391@northwind-labs.example",
    ),
    Mail(
        "Cloudhost Billing <billing@cloudhost.example>",
        "Your invoice INV-20977 for September",
        "Tue, 01 Oct 2024 06:15:00 +0000",
        "Hello,\n\nyour invoice INV-20977 (EUR 1,309.50) for September 2024 is ready.\n"
        "It will be charged to the card ending in 4417 on 8 October.\n\nCloudhost Billing\n",
        "inv-20977@cloudhost.example",
    ),
]


def _from_line(date: str) -> str:
    """The mbox separator line for an RFC 2822 date (asctime form, as Thunderbird writes)."""
    from email.utils import parsedate_to_datetime

    moment = parsedate_to_datetime(date)
    return "From - " + moment.strftime("%a %b %d %H:%M:%S %Y")


def render(mail: Mail) -> str:
    """One mbox entry (separator, headers, body), LF line ends, ending with a blank line."""
    headers = [
        _from_line(mail.date),
        "X-Mozilla-Status: 0000",
        "X-Mozilla-Status2: 00000000",
        f"Message-ID: <{mail.message_id}>",
        f"Date: {mail.date}",
        f"From: {mail.sender}",
        "To: Alex Morgan <alex.morgan@northwind-labs.example>",
        f"Subject: {mail.subject}",
        "MIME-Version: 1.0",
    ]
    if mail.attachment is None:
        headers += [
            "Content-Type: text/plain; charset=UTF-8; format=flowed",
            "Content-Transfer-Encoding: 7bit",
        ]
        return "\n".join(headers) + "\n\n" + mail.body + "\n"
    name, content = mail.attachment
    boundary = "------------nwl" + mail.message_id.split("@")[0].replace("-", "")
    encoded = base64.encodebytes(content.encode()).decode()
    headers.append(f'Content-Type: multipart/mixed; boundary="{boundary}"')
    parts = [
        "This is a multi-part message in MIME format.",
        f"--{boundary}",
        "Content-Type: text/plain; charset=UTF-8; format=flowed",
        "Content-Transfer-Encoding: 7bit",
        "",
        mail.body,
        f"--{boundary}",
        f'Content-Type: text/csv; charset=UTF-8; name="{name}"',
        f'Content-Disposition: attachment; filename="{name}"',
        "Content-Transfer-Encoding: base64",
        "",
        encoded,
        f"--{boundary}--",
        "",
    ]
    return "\n".join(headers) + "\n\n" + "\n".join(parts) + "\n"


def mbox(mails: list[Mail]) -> bytes:
    """An mbox file holding ``mails`` in order."""
    return "".join(render(m) for m in mails).encode()


def prefs_js() -> bytes:
    """``prefs.js`` with the Local Folders account and the quiet-start prefs."""
    lines = [
        "// Mozilla User Preferences",
        "",
        "// Written by tasks/tools/make_thunderbird_profile.py for the offline task suite.",
    ]
    lines += [f"user_pref({json.dumps(k)}, {json.dumps(v)});" for k, v in sorted(PREFS.items())]
    return ("\n".join(lines) + "\n").encode()


def profile_files() -> dict[str, bytes]:
    """Paths (relative to the home) and contents of the profile."""
    base = f".thunderbird/{PROFILE_DIR}"
    profiles_ini = (
        "[Profile0]\nName=default-release\nIsRelative=1\n"
        f"Path={PROFILE_DIR}\nDefault=1\n\n"
        f"[Install{INSTALL_HASH}]\nDefault={PROFILE_DIR}\nLocked=1\n\n"
        "[General]\nStartWithLastProfile=1\nVersion=2\n"
    )
    installs_ini = f"[{INSTALL_HASH}]\nDefault={PROFILE_DIR}\nLocked=1\n"
    return {
        ".thunderbird/profiles.ini": profiles_ini.encode(),
        ".thunderbird/installs.ini": installs_ini.encode(),
        f"{base}/prefs.js": prefs_js(),
        f"{base}/Mail/Local Folders/Inbox": mbox(INBOX),
        f"{base}/Mail/Local Folders/Trash": b"",
        # Reopen on the Inbox (the last session's folder), not the account's start page.
        f"{base}/session.json": json.dumps(SESSION, separators=(",", ":")).encode(),
        # The main window opens maximized, as a mail client is kept on a 1920x1080 screen
        # (the window manager decides otherwise: GNOME opens it at 1280 px wide, and a
        # narrow window shows another layout of the message list and toolbars).
        f"{base}/xulstore.json": json.dumps(XULSTORE, separators=(",", ":")).encode(),
    }


def tarball(files: dict[str, bytes]) -> bytes:
    """A gzipped tar of ``files`` with folders, fixed mtimes, owner 1000 and no gzip time stamp."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        folders = sorted({str(Path(p).parents[i]) for p in files for i in range(len(Path(p).parts) - 1)})
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o700
            _own(info)
            tar.addfile(info)
        for path in sorted(files):
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(files[path]), 0o600
            _own(info)
            tar.addfile(info, io.BytesIO(files[path]))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def _own(info: tarfile.TarInfo) -> None:
    info.mtime, info.uid, info.gid, info.uname, info.gname = MTIME, 1000, 1000, "user", "user"


def main() -> None:
    """Write the profile tarball and the gold files."""
    TB_ASSETS.mkdir(parents=True, exist_ok=True)
    PROFILE_TARBALL.write_bytes(tarball(profile_files()))
    gold = TB_ASSETS / NEWSLETTER_TASK
    gold.mkdir(exist_ok=True)
    (gold / "Inbox.expected").write_bytes(mbox([m for m in INBOX if "devweekly" not in m.sender]))
    attachment = ROOT / "multi_apps" / "assets" / ATTACHMENT_TASK
    attachment.mkdir(parents=True, exist_ok=True)
    (attachment / "budget_q3.csv").write_text(BUDGET_CSV)
    print(f"wrote {PROFILE_TARBALL.relative_to(ROOT.parent)} ({PROFILE_TARBALL.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
