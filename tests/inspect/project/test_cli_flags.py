"""`claude` command lines in Dockerfiles, scripts, package.json and code."""

from __future__ import annotations

import textwrap

from agentguard.facts.agents import FirewallContainer
from agentguard.inspect.project.cli_flags import cli_configs


def _read(path: str, text: str) -> list[tuple[int, dict[str, object]]]:
    data = textwrap.dedent(text).encode()
    return [(c.line, {k: o.value for k, o in c.options.items()}) for c in cli_configs(path, data)]


def test_dockerfile_json_cmd_and_shell_continuations() -> None:
    dockerfile = """
        FROM node:22-slim
        # claude --dangerously-skip-permissions  (a comment: ignored)
        RUN npm install -g @anthropic-ai/claude-code@2.0.14 && claude --version
        CMD ["claude", "-p", "triage", "--allowedTools", "Read,Grep",
             "--permission-mode", "bypassPermissions"]
        ENTRYPOINT claude -p go \\
            --tools "Read Edit" --add-dir /data --fallback-model claude-haiku-4-5
    """
    assert _read("Dockerfile", dockerfile) == [
        (5, {"allowed_tools": ("Read", "Grep"), "permission_mode": "bypassPermissions"}),
        (
            7,
            {
                "tools": ("Read", "Edit"),
                "add_dirs": ("/data",),
                "fallback_model": "claude-haiku-4-5",
            },
        ),
    ]


def test_npx_package_python_argv_and_yaml() -> None:
    assert _read(
        "ci.yml",
        """
        steps:
          - run: npx -y @anthropic-ai/claude-code -p "review" --dangerously-skip-permissions
        """,
    ) == [(3, {"permission_mode": "bypassPermissions"})]
    assert _read(
        "run.py",
        """
        import subprocess
        subprocess.run([
            "claude", "-p", prompt,
            "--disallowedTools", "Bash",
        ])
        """,
    ) == [(4, {"disallowed_tools": ("Bash",)})]


def test_mentions_that_are_not_invocations() -> None:
    assert _read("notes.sh", "echo 'use claude-code'\nclaude --version\nclaude mcp list\n") == []


def test_claude_code_action_claude_args_block() -> None:
    workflow = """
        jobs:
          review:
            steps:
              - uses: anthropics/claude-code-action@v1
                with:
                  anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }}
                  claude_args: |
                    --allowedTools "Bash(npm test),Read"
                    --model claude-sonnet-4-5
              - run: echo done
    """
    assert _read(".github/workflows/review.yml", workflow) == [
        (8, {"allowed_tools": ("Bash(npm test)", "Read"), "model": "claude-sonnet-4-5"})
    ]


def test_quoted_one_line_claude_args_are_read() -> None:
    # claude-code-action's examples/ci-failure-auto-fix.yml and test-base-action.yml
    workflow = """
        - uses: anthropics/claude-code-action@v1
          with:
            claude_args: "--allowedTools 'Edit,Read,Bash(git:*),Bash(npx:*)'"
        - uses: anthropics/claude-code-action@v1
          with:
            claude_args: '--allowedTools "LS,Read"'
    """
    assert _read(".github/workflows/fix.yml", workflow) == [
        (4, {"allowed_tools": ("Edit", "Read", "Bash(git:*)", "Bash(npx:*)")}),
        (7, {"allowed_tools": ("LS", "Read")}),
    ]


def test_a_step_without_claude_args_is_an_agent_with_the_defaults() -> None:
    from agentguard.inspect.project.action_steps import action_steps

    workflow = textwrap.dedent(
        """
        steps:
          - uses: actions/checkout@v6
          - name: Run Claude Code
            id: claude
            uses: anthropics/claude-code-action@v1
            with:
              anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }}
              # claude_args: |
              #   --allowedTools "Bash(npm install)"
          - uses: anthropics/claude-code-action@v1
            with:
              claude_args: '--tools "Read"'
        """
    ).encode()
    configs = action_steps(".github/workflows/claude.yml", workflow)
    assert [(c.line, c.label, dict(c.options)) for c in configs] == [
        (6, "claude-code-action step (no claude_args: the action's defaults)", {})
    ]


def test_the_quote_idiom_inside_bash_c_is_read_as_the_shell_reads_it() -> None:
    # gh-aw's compiled step (pydantic-ai *.lock.yml): `'\''` puts a quote inside `bash -c '...'`
    step = r"""
        - run: |
            awf --config "${RUNNER_TEMP}/gh-aw/awf-config.json" --tty \
              -- /bin/bash -c 'export PATH="$(find "$T" -type d -name bin | tr '\''\n'\'' '\'':'\'')$PATH"; "$N" claude_harness.cjs claude --print --allowed-tools '\''Bash,Edit(/tmp/*),Read'\'' --debug-file /tmp/d.log --permission-mode acceptEdits --prompt-file /tmp/p.txt' 2>&1 | tee -a /tmp/d.log
    """
    assert _read(".github/workflows/a.lock.yml", step) == [
        (4, {"allowed_tools": ("Bash", "Edit(/tmp/*)", "Read"), "permission_mode": "acceptEdits"})
    ]


def test_bash_c_inside_sh_c_is_split_twice() -> None:
    line = """sh -c "bash -c 'claude -p go --allowedTools Read,Grep'" && echo done\n"""
    assert _read("run.sh", line) == [(1, {"allowed_tools": ("Read", "Grep")})]


def test_an_unclosed_quote_in_prose_does_not_swallow_the_line() -> None:
    assert _read("notes.sh", "claude can't --allowedTools Read\n") == [
        (1, {"allowed_tools": ("Read",)})
    ]


def _awf(script: str) -> FirewallContainer | None:
    configs = cli_configs(".github/workflows/a.lock.yml", textwrap.dedent(script).encode())
    assert len(configs) == 1
    return configs[0].confined_by


_CONFIG = """printf '%s\\n' '{"network":{"allowDomains":["github.com","pypi.org"]}}' > "${RUNNER_TEMP}/awf.json\""""
_AWF = """awf --config "${RUNNER_TEMP}/awf.json" --container-workdir "${GITHUB_WORKSPACE}" --env-all --exclude-env ANTHROPIC_API_KEY --mount "/a:/a:ro" \\
  -- /bin/bash -c 'claude --print --allowed-tools '\\''Bash'\\'''"""


def test_awf_container_and_its_allow_list_are_read_from_the_file() -> None:
    assert _awf(f"{_CONFIG}\n{_AWF}\n") == FirewallContainer(
        wrapper="awf",
        line=2,
        allow_domains=("github.com", "pypi.org"),
        domains_line=1,
        workdir="${GITHUB_WORKSPACE}",
        env_all=True,
        excluded_env=("ANTHROPIC_API_KEY",),
        mounts=("/a:/a:ro",),
    )


def test_awf_config_rewritten_with_content_not_read_leaves_the_allow_list_unknown() -> None:
    rewrite = 'printf \'%s\\n\' "$OTHER" > "${RUNNER_TEMP}/awf.json"'
    fw = _awf(f"{_CONFIG}\n{rewrite}\n{_AWF}\n")
    assert fw is not None and fw.allow_domains is None and fw.line == 3
    assert fw.domains_unread == "line 2 rewrites the config with content not read"
    none = _awf(f"{_AWF}\n")
    assert none is not None and none.domains_unread == (
        "nothing above line 1 writes the config ${RUNNER_TEMP}/awf.json"
    )


def test_a_command_not_after_awf_s_double_dash_is_not_in_its_container() -> None:
    assert _awf("awf --version && claude --print --allowed-tools Bash\n") is None
    assert _awf("claude --print --allowed-tools Bash -- awf\n") is None


def test_an_awf_config_line_with_two_json_texts_leaves_the_allow_list_unknown() -> None:
    """Two candidates on the line that writes the config: never the first taken."""
    two = _CONFIG.replace("' > ", '\' \'{"network":{"allowDomains":["*"]}}\' > ')
    fw = _awf(f"{two}\n{_AWF}\n")
    assert fw is not None and fw.allow_domains is None
    assert fw.domains_unread == "the config written at line 1 holds 2 JSON texts"


# gh-aw writes the config as a double-quoted word when it holds a variable
# (pydantic-ai's stale-issues-finder.lock.yml: `"maxAiCredits":${GH_AW_MAX_AI_CREDITS}`)
_DOUBLE = (
    'printf \'%s\\n\' "{\\"\\$schema\\":\\"s\\",\\"network\\":{\\"allowDomains\\":'
    '[\\"github.com\\"]},\\"apiProxy\\":{\\"maxAiCredits\\":${GH_AW_MAX_AI_CREDITS},'
    '\\"maxRuns\\":$RUNS}}" > "${RUNNER_TEMP}/awf.json"'
)


def test_a_double_quoted_config_with_a_variable_as_a_value_gives_its_allow_list() -> None:
    fw = _awf(f"{_DOUBLE}\n{_AWF}\n")
    assert fw is not None and fw.allow_domains == ("github.com",)
    assert fw.domains_line == 1


def test_a_variable_in_the_allow_list_or_outside_a_value_leaves_it_unknown() -> None:
    in_list = _DOUBLE.replace('[\\"github.com\\"]', '[\\"$HOST\\"]')
    fw = _awf(f"{in_list}\n{_AWF}\n")
    assert fw is not None and fw.allow_domains is None
    assert fw.domains_unread == "the allow-list written at line 1 holds a shell expansion"
    spliced = _DOUBLE.replace('\\"maxRuns\\":$RUNS', "$MORE")
    fw = _awf(f"{spliced}\n{_AWF}\n")
    assert fw is not None and fw.allow_domains is None
    assert fw.domains_unread == "the config written at line 1 is not JSON"
    single = _CONFIG.replace('"pypi.org"]}', '"pypi.org"]},"n":$X')
    fw = _awf(f"{single}\n{_AWF}\n")  # single quotes: the shell writes `$X` as it is
    assert fw is not None and fw.domains_unread == "the config written at line 1 is not JSON"


def test_gh_aw_s_harness_starting_the_workflow_s_engine_command_is_a_claude_command() -> None:
    """pydantic-ai's main agent steps: `node claude_harness.cjs /tmp/gh-aw/bin/LAUNCHER
    --print --allowed-tools ...` (gh-aw's `engine.command`, given Claude's flags)."""
    line = (
        '-- /bin/bash -c \'set +o histexpand; "$NODE" ${RUNNER_TEMP}/gh-aw/actions/'
        "claude_harness.cjs /tmp/gh-aw/bin/runner-launch --print --allowed-tools "
        "'\\''Bash,Read'\\'' --permission-mode acceptEdits'\n"
    )
    (config,) = cli_configs(".github/workflows/a.lock.yml", line.encode())
    assert config.engine == "claude CLI"
    assert "`/tmp/gh-aw/bin/runner-launch`" in config.label
    assert config.options["allowed_tools"].value == ("Bash", "Read")
    assert config.options["permission_mode"].value == "acceptEdits"
    harness_claude = line.replace("/tmp/gh-aw/bin/runner-launch", "claude")
    (plain,) = cli_configs(".github/workflows/a.lock.yml", harness_claude.encode())
    assert plain.label == "claude command line"  # read once, as `claude`
    assert plain.options["allowed_tools"].value == ("Bash", "Read")
    assert cli_configs("a.sh", b"node claude_harness.cjs --version\n") == []


def test_python_prose_names_a_command_line_that_runs_nothing() -> None:
    # agentguard's own gate, CI: a module docstring that said "a run: step's ``claude -p``"
    # was read as a claude command line with every built-in tool live (AG301 high)
    source = '''
        """The job a ``claude`` command line written in a workflow runs in.

        A command line read from a workflow (a ``run:`` step's ``claude -p``) carries no job.
        """
        import subprocess


        def review(prompt):
            """Runs ``claude -p`` with every tool."""
            "claude --dangerously-skip-permissions -p note"
            return subprocess.run(["claude", "-p", prompt, "--tools", "Read"])
        '''
    assert _read("pkg/workflow_jobs.py", source) == [(12, {"tools": ("Read",)})]
    # a string that is assigned (a script the code writes and runs) is still read
    script = 'SCRIPT = """\nclaude -p go --dangerously-skip-permissions\n"""\n'
    assert _read("make_script.py", script) == [(2, {"permission_mode": "bypassPermissions"})]
    # a Python file that does not parse is read whole, line by line
    assert _read("broken.py", '"""\nclaude -p x --tools Read\n') == [(2, {"tools": ("Read",)})]


def test_a_docstring_the_code_reads_back_is_read() -> None:
    # (the prose filter's own attack: a module that runs its docstring)
    source = '"""claude -p go --dangerously-skip-permissions"""\nimport os\nos.system(__doc__)\n'
    assert _read("run.py", source) == [(1, {"permission_mode": "bypassPermissions"})]
    getdoc = (
        "import inspect, subprocess\n\n\ndef job():\n"
        '    """claude -p triage --tools Read"""\n\n\n'
        "subprocess.run(inspect.getdoc(job), shell=True)\n"
    )
    assert _read("job.py", getdoc) == [(5, {"tools": ("Read",)})]


def test_prose_read_back_by_any_spelling_is_read() -> None:
    # (the prose filter's attack, again: `__doc__` spelled so no text search finds it, a
    # code object's constants, the file's own text)
    run = "claude -p go --dangerously-skip-permissions"
    bypass = {"permission_mode": "bypassPermissions"}
    read_back = {
        "globals.py": f'"""{run}"""\nimport os\nos.system(globals()["__d" "oc__"])\n',
        "getattr.py": f'"""{run}"""\nimport os, sys\n'
        'os.system(getattr(sys.modules[__name__], "_" * 2 + "doc" + "_" * 2))\n',
        "vars.py": f'import os\nclass C:\n    """{run}"""\nos.system(vars(C)["__d" "oc__"])\n',
        "fmt.py": f'"""{run}"""\nimport os, sys\n'
        'os.system(("{0.__d" "oc__}").format(sys.modules[__name__]))\n',
        "consts.py": f'import os\ndef f():\n    "{run}"\nos.system(f.__code__.co_consts[0])\n',
        "own.py": f'"""{run}"""\nimport os\nos.system(open("own.py").readline()[3:-4])\n',
        "lines.py": f'import linecache, os\n"{run}"\n'
        "os.system(linecache.getline(__file__, 2).strip().strip(chr(34)))\n",
    }
    for name, source in read_back.items():
        line = 3 if name in ("vars.py", "consts.py") else 2 if name == "lines.py" else 1
        assert _read(name, source) == [(line, bypass)], name


def test_prose_blanking_counts_lines_and_columns_as_python_does() -> None:
    run = 'os.system("claude -p x --dangerously-skip-permissions")'
    bypass = {"permission_mode": "bypassPermissions"}
    # columns are UTF-8 bytes: a note of wide characters must not swallow the code after it
    wide = f'import os\n"{"€" * 40}"; {run}\n'
    assert _read("wide.py", wide) == [(2, bypass)]
    # a lone CR ends a line for Python: a note on line 2 must not empty the code on the
    # third physical line (nor may a note past the last "\n" line fail the read)
    cr = f'import os\r"{"x" * 90}"\n{run}\n'
    assert cli_configs("cr.py", cr.encode())[0].options["permission_mode"].value == (
        "bypassPermissions"
    )
    assert cli_configs("cr_only.py", b'import os\rimport sys\r"claude -p note"\r') == []


def test_prose_read_back_from_an_f_string_field_is_read() -> None:
    # (an f-string is one STRING token before Python 3.12: its fields are code all the same)
    source = (
        '"""claude -p go --dangerously-skip-permissions"""\nimport os\nos.system(f"{__doc__}")\n'
    )
    assert _read("run.py", source) == [(1, {"permission_mode": "bypassPermissions"})]
    # a docstring that only says "open" or "format" reads nothing back: still prose
    prose = (
        '"""Open the report and format it.\n\n'
        "A line read from a workflow (a ``run:`` step's ``claude -p``) carries no job.\n"
        '"""\nimport json\n'
    )
    assert _read("report.py", prose) == []


def test_a_bad_escape_in_the_project_warns_nothing_of_ours() -> None:
    # (the project's own warnings are not agentguard's output: Python 3.12 prints them)
    import warnings

    source = 'import os\nx = "\\#"\nos.system("claude -p go --dangerously-skip-permissions")\n'
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = cli_configs("esc.py", source.encode())
    assert got[0].options["permission_mode"].value == "bypassPermissions"
    assert [str(w.message) for w in seen] == []
