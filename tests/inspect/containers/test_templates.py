"""A Jinja Dockerfile template read best-effort (OpenHands' sandbox image,
openhands/runtime/utils/runtime_templates/Dockerfile.j2, is the model): every branch
read, values unknown, line numbers kept; a file that still does not parse is skipped."""

from __future__ import annotations

from agentguard.engine.project import scan_container_files
from agentguard.findings import SourceStatus
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.dockerfile_facts import build_facts
from agentguard.inspect.project.templates import untemplate

# as OpenHands writes it: an if/else inside one continued RUN, with whitespace control
INLINE = """FROM {{ base_image }}
RUN apt-get update && \\
    TZ=Etc/UTC DEBIAN_FRONTEND=noninteractive \\
        {%- if ('mswebench' in base_image) -%}
        apt-get install -y nodejs python3
        {%- else %}
        apt-get install -y nodejs python3.12
        {% endif -%}
{# a comment
   over two lines #}
USER root
"""


def test_both_branches_of_a_continued_instruction_are_read_on_their_lines() -> None:
    t = untemplate(INLINE)
    assert (t.branches, t.values, t.unknown_lines, t.not_followed) == (1, 1, 0, ())
    assert t.text.count("\n") == INLINE.count("\n")
    df = build_facts("Dockerfile.j2", t.text)
    [stage] = df.stages
    assert (stage.base, stage.user, stage.user_line) == ("{{base_image}}", "root", 11)
    [run] = stage.runs
    assert run.line == 2
    assert "apt-get install -y nodejs python3 ;" in run.script
    assert run.script.rstrip().endswith("apt-get install -y nodejs python3.12")


def test_macros_are_read_where_defined_and_values_alone_on_a_line_are_unknown() -> None:
    text = (
        "FROM {{ base }}\n"
        "{% macro deps() %}\n"
        "RUN pip install -r requirements.txt\n"
        "{% endmacro %}\n"
        "{{ deps() }}\n"
        "{{ extra_instructions }}\n"
        "{% include 'tail.j2' %}\n"
        "RUN {{ extra_deps | default('') }}\n"
        "USER {{ user }}\n"
    )
    t = untemplate(text)
    assert (t.values, t.unknown_lines, t.not_followed) == (3, 1, ("{% include 'tail.j2' %}",))
    [stage] = build_facts("Dockerfile.j2", t.text).stages
    assert [(r.line, r.script) for r in stage.runs] == [
        (3, "pip install -r requirements.txt"),
        (8, "{{extra_deps_default}}"),
    ]
    assert stage.user == "{{user}}"


def _sources(name: str, text: str):  # type: ignore[no-untyped-def]
    findings, sources, _ = scan_container_files([ProjectFile(name, text.encode())])
    return findings, [s for s in sources if s.name == name]


def test_a_templated_user_is_unknown_never_taken_as_non_root() -> None:
    findings, [source] = _sources("Dockerfile.j2", "FROM python:3.12\nUSER {{ user }}\n")
    assert source.status is SourceStatus.OK
    [ag401] = [f for f in findings if f.rule_id == "AG401"]
    assert ag401.message == (
        "The user the final stage of Dockerfile.j2 runs as could not be determined; it may be root."
    )


def test_go_template_braces_in_a_plain_dockerfile_are_not_a_template() -> None:
    text = "FROM docker:27\nRUN docker inspect --format '{{.Id}}' x\nUSER 10001\n"
    findings, [source] = _sources("Dockerfile", text)
    assert (source.status, source.reason.startswith("Dockerfile (")) == (SourceStatus.OK, True)
    assert [f.rule_id for f in findings if f.rule_id == "AG401"] == []


def test_a_template_that_still_does_not_parse_is_skipped_not_failed() -> None:
    _, [source] = _sources("sandbox.Dockerfile", "{% if x %}\n{{ x }} FROM a\n{% endif %}\n")
    assert source.status is SourceStatus.SKIPPED
    assert source.reason.startswith("a template ({% %} / {{ }} markers) that does not parse")
