"""Our stand-in for OSWorld's VS Code evaluation extension (``eval-0.0.1.vsix``).

OSWorld's ``vscode_config`` getter runs a command of a custom extension through the
command palette; the extension writes a file the evaluator reads. OSWorld downloads the
extension from Hugging Face, which this machine cannot reach, so the tests build their own
with the same command names: ``OpenProject`` writes the name of the window's first
workspace folder (empty when no folder is open) to ``~/OpenProject.txt``.
"""

from __future__ import annotations

import io
import json
import zipfile

#: The extension's entry point: one command per evaluation probe.
EXTENSION_JS = """\
const vscode = require("vscode");
const fs = require("fs");
const os = require("os");
const path = require("path");

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("eval.OpenProject", () => {
      const folders = vscode.workspace.workspaceFolders || [];
      const name = folders.length > 0 ? folders[0].name : "";
      fs.writeFileSync(path.join(os.homedir(), "OpenProject.txt"), name);
    })
  );
}

module.exports = { activate };
"""

PACKAGE_JSON = {
    "name": "eval",
    "displayName": "eval",
    "publisher": "pytest-osworld",
    "version": "0.0.1",
    "engines": {"vscode": "^1.70.0"},
    "main": "./extension.js",
    "activationEvents": ["onCommand:eval.OpenProject"],
    "contributes": {"commands": [{"command": "eval.OpenProject", "title": "OpenProject"}]},
}

MANIFEST = """\
<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011">
  <Metadata>
    <Identity Language="en-US" Id="eval" Version="0.0.1" Publisher="pytest-osworld"/>
    <DisplayName>eval</DisplayName>
    <Description xml:space="preserve">Evaluation probes for pytest-osworld's tests</Description>
    <Categories>Other</Categories>
    <Properties>
      <Property Id="Microsoft.VisualStudio.Code.Engine" Value="^1.70.0"/>
    </Properties>
  </Metadata>
  <Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>
  <Dependencies/>
  <Assets>
    <Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true"/>
  </Assets>
</PackageManifest>
"""

CONTENT_TYPES = """\
<?xml version="1.0" encoding="utf-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension=".json" ContentType="application/json"/>
  <Default Extension=".js" ContentType="application/javascript"/>
  <Default Extension=".vsixmanifest" ContentType="text/xml"/>
</Types>
"""


def vsix_bytes() -> bytes:
    """The extension packaged as a ``.vsix`` (a zip), installable with ``code --install-extension``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("extension.vsixmanifest", MANIFEST)
        archive.writestr("extension/package.json", json.dumps(PACKAGE_JSON, indent=2))
        archive.writestr("extension/extension.js", EXTENSION_JS)
    return buffer.getvalue()


def osworld_zip_bytes() -> bytes:
    """The vsix wrapped as OSWorld ships it: ``vscodeEvalExtension/eval-0.0.1.vsix`` in a zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("vscodeEvalExtension/eval-0.0.1.vsix", vsix_bytes())
    return buffer.getvalue()
