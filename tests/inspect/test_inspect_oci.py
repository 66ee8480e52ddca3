"""`agentguard inspect` on an OCI layout folder with two platforms (gzip and zstd layers)."""

from __future__ import annotations

from pathlib import Path

from tests.inspect.engine_support import findings_of, inspect_cli, report_of
from tests.inspect.oci_writer import Platform, write_layout

SITE = "usr/local/lib/python3.12/site-packages"


def _layout(tmp_path: Path) -> Path:
    return write_layout(
        tmp_path / "agent-oci",
        [
            Platform(
                "linux",
                "amd64",
                [({"app/README.md": "# how we work\n", "app/.env": "A=1\n"}, "gzip")],
                {"WorkingDir": "/app", "User": "10001"},
            ),
            Platform(
                "linux",
                "arm64",
                [
                    (
                        {f"{SITE}/mcp-1.27.0.dist-info/METADATA": "Name: mcp\nVersion: 1.27.0\n\n"},
                        "zstd",
                    )
                ],
                {"WorkingDir": "/work", "User": "10001"},
            ),
        ],
    )


def test_oci_layout_folder_platform_chosen_with_flag(tmp_path: Path) -> None:
    layout = _layout(tmp_path)

    amd = inspect_cli(layout, "--kind", "oci", "--platform", "linux/amd64", "--format", "json")
    arm = inspect_cli(layout, "--kind", "oci", "--platform", "linux/arm64", "--format", "json")

    amd_report, arm_report = report_of(amd), report_of(arm)
    assert (amd.exit_code, amd_report["complete"]) == (1, True)
    assert (arm.exit_code, arm_report["complete"]) == (0, True)
    assert amd_report["facts"]["image"]["platform"] == "linux/amd64"
    assert amd_report["facts"]["image"]["layers"][0]["compression"] == "gzip"
    assert [(f["rule_id"], f["evidence"]["paths"]) for f in findings_of(amd_report, "AG201")] == [
        ("AG201", ["/app/.env", "/app/README.md"])
    ]
    assert arm_report["facts"]["image"]["platform"] == "linux/arm64"
    assert arm_report["facts"]["image"]["layers"][0]["compression"] == "zstd"
    assert [f["message"] for f in arm_report["findings"]] == [
        f"Image {layout} carries mcp 1.27.0 (major 1) in /{SITE}."
    ]


def test_oci_layout_folder_is_detected_without_kind(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    report = report_of(inspect_cli(layout, "--platform", "linux/arm64", "--format", "json"))
    assert report["facts"]["target"] == {
        "text": str(layout),
        "kind": "oci",
        "how": "a local folder",
    }
