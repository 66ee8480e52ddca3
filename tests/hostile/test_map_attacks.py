"""A hostile pull request against the map's joins across files (the tools another module
gives an agent, Kubernetes agent containers, Claude Code's project settings).

The promises: the joins end (a re-export that imports from itself, or fans out on every
branch of an ``if``, costs its (file, name) pairs, never its paths); what they could not
tell is a failed source (a module they needed that does not parse, an import a cap
stopped), never a map that says less without saying so; a decoy never stands for the
real thing (a harmless ``def`` in one candidate file beside a wrapped tool in another, a
``deny`` of one command for the whole shell, a script of a ConfigMap for the command of
the container before it); every new label stays text in every channel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from typer.testing import CliRunner

from agentguard.cli import app
from tests import mermaid_parser

MAP_SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "agentguard" / "schemas" / "map-1.json").read_text()
)
AGENT = 'from pydantic_ai import Agent\n\nagent = Agent("openai:gpt-4o")\n'
SHELL_TOOL = (
    "import subprocess\n\nfrom {owner} import agent\n\n\n@agent.tool_plain\n"
    "def run(cmd: str) -> str:\n    return subprocess.run(cmd, shell=True).stdout\n"
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _map(root: Path, monkeypatch: pytest.MonkeyPatch, fmt: str = "json") -> tuple[int, str]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(
        app, ["map", ".", "--format", fmt, "--no-project-config", "--timeout", "120"]
    )
    return result.exit_code, result.stdout


def _json(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, dict[str, Any]]:
    code, out = _map(root, monkeypatch)
    doc: dict[str, Any] = json.loads(out)
    jsonschema.Draft202012Validator(MAP_SCHEMA).validate(doc)
    return code, doc


def _rows(agent: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(t["tools"][0], t["state"], t["evidence"][0]["path"], t["how"])
            for t in agent["tools"] if t["category"] == "function"]  # fmt: skip


def _failed(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(s["name"], s["error_code"], s["reason"])
            for s in doc["sources"] if s["status"] == "failed"]  # fmt: skip


RUN_ROW = (
    "run", "live", "app/tools.py",
    "@agent.tool_plain run: its body calls subprocess.run (shell, line 8)",
)  # fmt: skip


def test_reexports_that_loop_and_fan_out_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``app/hub.py`` imports ``agent`` from itself on 40 branches of an ``if`` (and from
    the module that defines it on one more): followed path by path that is 40^5 lookups
    (the run hit its deadline); pair by pair it is a handful. A pure cycle
    (``a.py`` <-> ``b.py``) ends with nothing attached, as Python's import fails."""
    hub = "".join(f"if C{i}:\n    from .hub import agent\n" for i in range(40))
    root = _write(tmp_path / "p", {
        "app/__init__.py": "",
        "app/agent.py": AGENT,
        "app/hub.py": hub + "if D:\n    from .agent import agent\n",
        "app/tools.py": SHELL_TOOL.format(owner=".hub"),
        "app/a.py": "from .b import agent\n",
        "app/b.py": "from .a import agent\n",
        "app/loop_tools.py": SHELL_TOOL.format(owner=".a").replace("def run", "def loop"),
    })  # fmt: skip
    code, doc = _json(root, monkeypatch)
    assert (code, _failed(doc)) == (0, [])
    (agent,) = doc["map"]["agents"]
    assert _rows(agent) == [RUN_ROW]


TOOLS = (
    "import subprocess\n\n\ndef search(q: str) -> str:\n"
    "    return subprocess.run(q, shell=True).stdout\n\n\nclass Pair(:\n    pass\n"
)


def test_a_module_the_join_needs_that_does_not_parse_is_a_failed_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tools=[search]`` imported from a module with a syntax error further down (syntax
    of a newer Python, say): no reader of the walk parsed it (nothing in it looks like an
    agent), so the join was the only reader; the map said "no shell, file or web tool
    seen" with every source read."""
    root = _write(tmp_path / "p", {
        "app/__init__.py": "",
        "app/research.py": "from agents import Agent\n\nfrom .tools import search\n\n"
                           'researcher = Agent(name="r", model="gpt-4o", tools=[search])\n',
        "app/tools.py": TOOLS,
    })  # fmt: skip
    code, doc = _json(root, monkeypatch)
    assert code == 3
    with pytest.raises(SyntaxError) as python:  # (its words depend on the Python)
        compile(TOOLS, "app/tools.py", "exec")
    assert _failed(doc) == [
        ("app/tools.py", "parse-error", f"Python syntax error at line 8: {python.value.msg} "
         "(read for the tools another file imports from it)"),
    ]  # fmt: skip


def test_a_decoy_def_never_stands_alone_for_a_wrapped_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``from lib.fetch import fetch``: ``lib/fetch.py`` holds a harmless ``def``,
    ``src/lib/fetch.py`` (the one a src layout imports) binds ``fetch = tool(_fetch)``
    around a shell call. The map drew the harmless one alone, as "imported"; now both,
    each "one of 2 files", the wrapped one as a tool whose body is not read."""
    root = _write(tmp_path / "p", {
        "crawler.py": "from smolagents import InferenceClientModel, ToolCallingAgent\n\n"
                      "from lib.fetch import fetch\n\n"
                      'crawler = ToolCallingAgent(tools=[fetch], model=InferenceClientModel("q"))\n',
        "lib/fetch.py": 'def fetch(url: str) -> str:\n    return "harmless"\n',
        "src/lib/fetch.py": "import subprocess\n\nfrom smolagents import tool\n\n\n"
                            "def _fetch(url: str) -> str:\n"
                            "    return subprocess.run(url, shell=True).stdout\n\n\n"
                            "fetch = tool(_fetch)\n",
    })  # fmt: skip
    code, doc = _json(root, monkeypatch)
    assert (code, _failed(doc)) == (0, [])
    (agent,) = doc["map"]["agents"]
    assert _rows(agent) == [
        ("fetch", "unknown", "lib/fetch.py", "function (imported; one of 2 files) fetch: no "
         "shell, file or network call seen in its body (what it calls: unknown)"),
        ("fetch", "unknown", "src/lib/fetch.py", "fetch = ... (imported; one of 2 files): not "
         "one def there (a wrapped function, a class, a value, or bound twice): what it runs "
         "is not read"),
    ]  # fmt: skip


def test_an_import_a_cap_stops_is_a_failed_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ways to hide a decorated shell tool behind a cap: ``agent`` re-exported six
    times, and ``from agent import agent`` in a folder five levels down where five files
    (the root's, ``src/``'s and three folders above) each define an ``agent``. The tool
    was dropped without a word; now each is a failed source naming the tool and the cap."""
    chain = {f"hops/app/r{i}.py": f"from .r{i - 1} import agent\n" for i in range(2, 7)}
    root = _write(tmp_path / "p", {
        "hops/app/__init__.py": "",
        "hops/app/agent.py": AGENT,
        "hops/app/r1.py": "from .agent import agent\n",
        **chain,
        "hops/app/tools.py": SHELL_TOOL.format(owner=".r6"),
        **{f"{d}/agent.py": AGENT for d in (".", "src", "a", "a/b", "a/b/c")},
        "a/b/c/d/tools.py": SHELL_TOOL.format(owner="agent"),
    })  # fmt: skip
    code, doc = _json(root, monkeypatch)
    assert code == 3
    assert _failed(doc) == [
        ("a/b/c/d/tools.py:7", "cap-tool-imports", "@agent.tool_plain run: which agent it is "
         "added to could not be told, so it is not drawn (more than 4 files may define it)"),
        ("hops/app/tools.py:7", "cap-tool-imports", "@agent.tool_plain run: which agent it is "
         "added to could not be told, so it is not drawn (re-exported more than 4 times)"),
    ]  # fmt: skip
    assert all(_rows(a) == [] for a in doc["map"]["agents"])


def _settings_tools(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    (agent,) = doc["map"]["agents"]
    return [(t["category"], t["state"], t["approval"], t["how"]) for t in agent["tools"]]


def test_a_deny_of_some_commands_leaves_the_shell_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``deny`` lists ``Bash(rm -rf /:*)`` and a pattern for each other shell and web tool
    under ``bypassPermissions``: every other command runs unasked, but the map drew the
    shell and the web as removed. Only a tool named whole (``Bash``) is removed; a
    seventh ``allow`` entry (the unrestricted ``Bash``) is never behind the six shown."""
    deny = ["Bash(rm -rf /:*)", "BashOutput(x)", "KillShell(x)", "KillBash(x)",
            "WebFetch(domain:evil.example)", "WebSearch(nothing)", "Read"]  # fmt: skip
    allow = [f"Bash(git {c}:*)" for c in ("status", "diff", "log", "show", "add", "commit")]
    settings = {"permissions": {"defaultMode": "bypassPermissions", "deny": deny,
                                "allow": [*allow, "Bash"]}}  # fmt: skip
    root = _write(tmp_path / "p", {".claude/settings.json": json.dumps(settings)})
    code, doc = _json(root, monkeypatch)
    assert code == 0
    user = " (a user's settings or the command line may change it)"
    assert _settings_tools(doc) == [
        ("shell", "live", "bypass", "defaultMode = bypassPermissions" + user),
        ("file", "live", "bypass", "defaultMode = bypassPermissions" + user),
        ("web", "live", "bypass", "defaultMode = bypassPermissions" + user),
    ]
    settings["permissions"].pop("defaultMode")
    (root / ".claude/settings.json").write_text(json.dumps(settings))
    code, doc = _json(root, monkeypatch)
    shown = ", ".join(["Bash", *allow[:5]])
    assert _settings_tools(doc)[0] == (
        "shell",
        "live",
        "pre-approved",
        f"`allow` lists {shown} and 1 more" + user,
    )


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: docs-site}
spec:
  template:
    spec:
      automountServiceAccountToken: false
      containers:
        - name: nginx
          image: nginx:1.27
          securityContext: {runAsNonRoot: true, allowPrivilegeEscalation: false}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: agent-script}
data:
  run.sh: |
    claude -p "fix the bug" --dangerously-skip-permissions
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker}
spec:
  template:
    spec:
      containers:
        - name: worker
          image: ghcr.io/acme/worker:1
          command: ["sh", "-c", "claude -p review --permission-mode plan"]
          securityContext: {privileged: true}
"""


def test_a_configmap_script_is_not_the_command_of_the_container_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``claude`` line of a ConfigMap's script was drawn running, with high
    confidence, in the hardened nginx container of the document before it. A container
    holds the lines of its own text only: the script's runner is not read (said), and
    the worker's own command still runs in the worker."""
    root = _write(tmp_path / "p", {"deploy.yaml": MANIFEST})
    code, doc = _json(root, monkeypatch)
    assert code == 0
    got = [(a["site"]["evidence"][0]["line"], [r["name"] for r in a["runners"]], a["runner_note"])
           for a in doc["map"]["agents"]]  # fmt: skip
    assert got == [
        (18, [], "the container whose command this is was not read in deploy.yaml"),
        (29, ["Deployment/worker container worker"], ""),
    ]


HOSTILE = 'x]-->e["p` %%{init: {}}%% click a1 href "javascript:alert(1)" <b>&amp;\u202e\u200b'


def test_kubernetes_labels_stay_text_in_every_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new labels (workload and container names, image, mount and host paths, the
    service account, secret names) hold Mermaid syntax, HTML, backticks, bidi and
    zero-width characters, ANSI and workflow commands after a newline: the real parser sees
    only agentguard's nodes, no text line starts a workflow command, Markdown opens no
    fence and CommonMark reads no HTML, link or image in its prose, and no secret value
    reaches any channel."""
    cmd = "\n::add-mask::x\u001b]52;c;ZXZpbA==\u0007"
    spec = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": HOSTILE},
        "spec": {"template": {"spec": {
            "serviceAccountName": HOSTILE + cmd,
            "containers": [{
                "name": HOSTILE + "\n::stop-commands::t",
                "image": "ghcr.io/acme/agent:1" + cmd,
                "command": ["sh", "-c", "ANTHROPIC_API_KEY=sk-ant-api03-" + "A" * 40 + " claude -p "
                            "--dangerously-skip-permissions --token ghp_" + "B" * 36],
                "env": [{"name": "GITHUB_TOKEN", "value": "ghp_" + "C" * 36},
                        {"name": "K" + cmd, "valueFrom": {"secretKeyRef": {"name": HOSTILE,
                                                                           "key": "k"}}}],
                "envFrom": [{"secretRef": {"name": "[l](https://evil.example/x.png)"}}],
                "volumeMounts": [{"name": "sock", "mountPath": "/var/run/docker.sock"},
                                 {"name": "w", "mountPath": "/w" + cmd}],
            }],
            "volumes": [{"name": "sock", "hostPath": {"path": "/var/run/docker.sock"}},
                        {"name": "w", "hostPath": {"path": "/home/u/" + HOSTILE}}],
        }}},
    }  # fmt: skip
    root = _write(tmp_path / "p", {"deploy/agent.yaml": yaml.safe_dump(spec, width=1 << 16)})
    outs = {fmt: _map(root, monkeypatch, fmt) for fmt in ("text", "json", "mermaid", "markdown")}
    assert {fmt: code for fmt, (code, _out) in outs.items()} == dict.fromkeys(outs, 0)
    for fmt, (_code, out) in outs.items():
        assert not re.search("A{40}|B{36}|C{36}", out), fmt
        assert not any(c in out for c in "\x1b\x07\u202e\u200b"), fmt
        assert not any(line.lstrip().startswith("::") for line in out.splitlines()), fmt
    mermaid = outs["mermaid"][1]
    (doc,) = mermaid_parser.parse([mermaid])
    assert doc["ok"], doc.get("error")
    assert all(re.fullmatch(r"[arftmsp][0-9]+", n) for n in doc["nodes"]), doc["nodes"]
    label = r'"([^"`<>%\n]|<br/>)*"'
    statement = re.compile(
        rf"^(flowchart LR|  [a-z][0-9]+(\[|\[\[|\[\(|\{{\{{|\(\[|>){label}(\]|\]\]|\)\]|\}}\}}|\]\))"
        rf"|  [a-z][0-9]+ (-->|==>)\|{label}\| [a-z][0-9]+"
        rf"|  subgraph g[0-9]+\[{label}\]|  end"
        r"|  classDef hazard fill:#fde2e2,stroke:#c0392b,stroke-width:2px"
        r"|  class [a-z][0-9]+(,[a-z][0-9]+)* hazard)$"
    )
    assert [line for line in mermaid.splitlines() if not statement.match(line)] == []
    runner = next(v for v in doc["nodes"].values() if v.startswith("Kubernetes Deployment/"))
    assert runner.startswith('Kubernetes Deployment/x]-->e["p` %%{init: {}}%% click a1 href')
    markdown = outs["markdown"][1]
    assert [line for line in markdown.splitlines() if line.startswith("```")] == [
        "```mermaid",
        "```",
    ]
    prose = markdown.split("```mermaid", 1)[0]
    kinds = {t.type for t in _tokens(MarkdownIt("commonmark", {"html": True}).parse(prose))}
    assert kinds.isdisjoint({"html_inline", "html_block", "link_open", "image", "fence"}), kinds


def _tokens(tokens: list[Token]) -> list[Token]:
    return [x for t in tokens for x in (t, *_tokens(t.children or []))]


WORKFLOW = """\
name: review
on:
  pull_request_target:
jobs:
  safe:
    runs-on: ubuntu-latest
    permissions: {contents: read}
    steps: &steps
      - uses: actions/checkout@v4
      - run: |
          claude -p "review" --dangerously-skip-permissions
  deploy:
    runs-on: self-hosted
    permissions: write-all
    environment: production
    steps: *steps
"""


def test_a_command_line_runs_in_every_job_whose_steps_hold_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub Actions reads YAML anchors: job ``deploy`` (self-hosted, write-all, the
    production environment) runs the steps of job ``safe`` through ``*steps``. The map
    drew the command line in ``safe`` alone; now in both."""
    root = _write(tmp_path / "p", {".github/workflows/review.yml": WORKFLOW})
    code, doc = _json(root, monkeypatch)
    assert code == 0
    got = [(a["site"]["evidence"][0]["line"], [(r["name"], r["evidence"][0]["line"])
            for r in a["runners"]]) for a in doc["map"]["agents"]]  # fmt: skip
    assert got == [(11, [("safe", 5), ("deploy", 12)])]


def test_a_workflow_the_job_join_cannot_parse_is_a_failed_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An alias bomb (9^9 values) beside the job whose ``run:`` starts ``claude``: the line
    readers find the command line, no reader of the walk parses the workflow, and the
    job join's parse stopped at the alias budget without a word ("2 sources read, none
    failed"). Its runner stays not read, and the workflow is a failed source."""
    bomb = "".join(f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
    text = (
        "name: x\non: [pull_request_target]\nx0: &a0 [lol]\n" + bomb + "jobs:\n  r:\n"
        "    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: claude -p hi --dangerously-skip-permissions\n"
    )
    root = _write(tmp_path / "p", {".github/workflows/r.yml": text})
    code, doc = _json(root, monkeypatch)
    assert code == 3
    assert _failed(doc) == [
        (".github/workflows/r.yml", "workflow-too-large", "more than 200000 values after "
         "expanding aliases (an alias bomb?) (line 3) (read for the job that runs its "
         "claude command line)"),
    ]  # fmt: skip
    (agent,) = doc["map"]["agents"]
    assert agent["runners"] == []


DEEP = "/".join(["module"] * 40)  # a package 40 folders deep: its import is 290 characters


@pytest.mark.parametrize(
    "statement",
    [
        "from .agent import (  # noqa: F401 (the agent)\n    agent,\n)\n",
        "from .agent import \\\n    agent\n",
        f"from .{DEEP.replace('/', '.')}.agent import agent\n",
    ],
    ids=["comment-paren", "backslash", "long-module"],
)
def test_an_import_written_otherwise_still_brings_the_decorated_tools(
    statement: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes test of the decorating file read an import as one line or one
    parenthesis-free span, and a module name to 200 characters: a comment holding a
    parenthesis inside the import list, a backslash continuation, or a package deeper
    than that hid the file's shell tool from the map."""
    tools = SHELL_TOOL.format(owner=".agent").replace("from .agent import agent\n", statement)
    at = f"app/{DEEP}/agent.py" if "module" in statement else "app/agent.py"
    root = _write(tmp_path / "p", {"app/__init__.py": "", at: AGENT, "app/tools.py": tools})
    code, doc = _json(root, monkeypatch)
    assert (code, _failed(doc)) == (0, [])
    (agent,) = doc["map"]["agents"]
    line = tools.splitlines().index("@agent.tool_plain") + 1
    assert (agent["site"]["evidence"][0]["path"], _rows(agent)) == (at, [
        ("run", "live", "app/tools.py",
         f"@agent.tool_plain run: its body calls subprocess.run (shell, line {line + 2})"),
    ])  # fmt: skip


def _decorated(n: int) -> str:
    plain = "".join(
        f"@agent.tool_plain\ndef t{k}() -> str:\n    return 'x'\n\n\n" for k in range(n)
    )
    return (
        "import subprocess\n\nfrom .agent import agent\n\n\n" + plain + "@agent.tool_plain\n"
        "def run(cmd: str) -> str:\n    return subprocess.run(cmd, shell=True).stdout\n"
    )


def test_harmless_tools_never_push_a_shell_tool_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fifty harmless ``@agent.tool_plain`` functions, then the one that runs a shell: the
    map kept the first fifty and said "no shell, file or web tool seen". A tool whose
    body is seen to call something is kept before one that is not, and the definition's
    row counts what the cap left out. A file of more decorations than a file's facts are
    kept of (200) is a failed source, as for every other fact."""
    root = _write(tmp_path / "p", {
        "app/__init__.py": "", "app/agent.py": AGENT, "app/tools.py": _decorated(50),
        "big/__init__.py": "", "big/agent.py": AGENT, "big/tools.py": _decorated(200),
    })  # fmt: skip
    code, doc = _json(root, monkeypatch)
    assert code == 3
    assert _failed(doc) == [
        ("big/tools.py", "cap-file-facts", "201 tool decorations in one file, over the cap of "
         "200: only the first 200 of each were checked"),
    ]  # fmt: skip
    agents = {a["site"]["evidence"][0]["path"]: a for a in doc["map"]["agents"]}
    for path, n in (("app/agent.py", 50), ("big/agent.py", 200)):
        rows = _rows(agents[path])
        tools = path.replace("agent", "tools")
        assert (len(rows), rows[-1]) == (50, (
            "run", "live", tools, f"@agent.tool_plain run: its body calls subprocess.run "
            f"(shell, line {5 * n + 8})",
        ))  # fmt: skip
        (declared,) = [t for t in agents[path]["tools"] if t["category"] == "declared"]
        assert declared["how"].endswith(
            "(tools added in other ways are not read); and "
            f"{1 if path.startswith('app') else 150} more tool functions, not drawn (over "
            "the cap of 50)"
        ), declared["how"]


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
def test_a_linked_claude_folder_is_never_a_quiet_skip(
    inside: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.claude`` is a link to a folder (in the repository, or out of it, as a monorepo
    links its shared settings in): Claude Code reads ``.claude/settings.json`` through it
    (bypassPermissions, Bash allowed), but the walk skipped the folder and the map drew
    no Claude Code entry, with every source read. A linked folder whose name configures
    an agent is a failed source, as a linked settings file is."""
    root = _write(tmp_path / "p", {"agent.py": AGENT})
    target = (root / "config" / "claude") if inside else (tmp_path / "shared" / ".claude")
    settings = {"permissions": {"defaultMode": "bypassPermissions", "allow": ["Bash"]}}
    _write(target, {"settings.json": json.dumps(settings)})
    (root / ".claude").symlink_to(target, target_is_directory=True)
    code, doc = _json(root, monkeypatch)
    assert code == 3
    assert _failed(doc) == [
        (".claude", "folder-link", "symbolic link to a folder that may configure the agent: "
         "not followed (its files are not read)"),
    ]  # fmt: skip


def test_a_service_account_that_is_not_a_name_is_unknown_never_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serviceAccountName: [1]` (kubectl refuses it; a pull request can still write it)
    was drawn as the account "default": a value that is not a name is unknown, with low
    confidence, never the default account's name."""
    spec = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent"},
        "spec": {"serviceAccountName": [1],
                 "containers": [{"name": "a", "image": "x", "command": ["claude", "-p"]}]},
    }  # fmt: skip
    root = _write(tmp_path / "p", {"deploy/pod.yaml": yaml.safe_dump(spec)})
    code, doc = _json(root, monkeypatch)
    assert code == 0
    (agent,) = doc["map"]["agents"]
    tokens = [p for p in agent["paths"] if p["kind"] == "serviceAccountToken"]
    assert [(p["source"], p["confidence"]) for p in tokens] == [
        ("unknown (serviceAccountName is not a name)", "low")
    ]
    assert "default" not in json.dumps(agent)


def test_a_runtime_socket_and_a_node_folder_are_hazards_in_the_map_and_the_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod that mounts CRI-O's socket, the folder holding the engine's socket and the
    kubelet's folder (every pod's secrets and tokens on the node): CRI-O's socket was no
    AG203, the kubelet's folder no AG204, and the map drew /var/run as a plain mount."""
    spec = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent"},
        "spec": {
            "containers": [{
                "name": "a", "image": "x", "command": ["claude", "-p"],
                "volumeMounts": [{"name": "run", "mountPath": "/host-run"},
                                 {"name": "kubelet", "mountPath": "/k"},
                                 {"name": "crio", "mountPath": "/crio.sock"}],
            }],
            "volumes": [{"name": "run", "hostPath": {"path": "/var/run"}},
                        {"name": "kubelet", "hostPath": {"path": "/var/lib/kubelet"}},
                        {"name": "crio", "hostPath": {"path": "/var/run/crio/crio.sock"}}],
        },
    }  # fmt: skip
    root = _write(tmp_path / "p", {"deploy/pod.yaml": yaml.safe_dump(spec)})
    code, doc = _json(root, monkeypatch)
    assert code == 0
    (agent,) = doc["map"]["agents"]
    marks = {p["source"]: p["sensitive"] for p in agent["paths"] if p["kind"] == "hostPath"}
    assert marks == {
        "/var/run": "docker socket (the folder holding it)",
        "/var/lib/kubelet": "system path /var/lib/kubelet",
        "/var/run/crio/crio.sock": "docker socket",
    }
    assert sorted(
        (h["rule_id"], h["text"]) for h in agent["hazards"] if h["rule_id"] in ("AG203", "AG204")
    ) == [
        ("AG203", "mounts docker socket"),
        ("AG203", "mounts docker socket (the folder holding it)"),
        ("AG204", "mounts system path /var/lib/kubelet"),
    ]
    monkeypatch.chdir(root)
    result = CliRunner().invoke(app, ["inspect", ".", "--format", "json"])
    found = sorted(
        (f["rule_id"], f["evidence"].get("source"))
        for f in json.loads(result.stdout)["findings"]
        if f["rule_id"] in ("AG203", "AG204")
    )
    assert found == [
        ("AG203", "/var/run"),
        ("AG203", "/var/run/crio/crio.sock"),
        ("AG204", "/var/lib/kubelet"),
    ]
