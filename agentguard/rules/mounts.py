"""AG2xx (part): what the agent can read -- its working directory and the host folders mounted in.

The rule classes here are shared: the image/container inspector emits them from
:class:`~agentguard.inspect.facts.ImageFacts` and
:class:`~agentguard.inspect.facts.ContainerFacts`, and the agent-config rules emit the
same classes from compose/devcontainer files. Pure functions only (no I/O).
"""

from __future__ import annotations

from agentguard.findings import Severity
from agentguard.rules.base import Rule, register


@register
class ProjectInImageWorkdir(Rule):
    """The image's working directory holds a project: source tree, documents, secrets.

    ## What it does
    Lists the files at or below the effective working directory of the image (its
    `WorkingDir`, or the container's) in the final filesystem, whiteouts applied, and
    reports project markers: `.git`, `pyproject.toml`/`package.json`, Markdown
    documents, `.env` files and key files. The evidence names the paths, the layer that
    added them and that layer's `created_by` (for example `COPY . /app`).

    ## Why is this bad?
    An agent reads what sits in its working directory. A planning document or a
    `CLAUDE.md` written for developers is retold as fact; an `.env` or a key file is
    one `cat` away from the model's context and from any tool output.

    ## Example
    ```dockerfile
    WORKDIR /app
    COPY . /app
    ```

    ## Use instead
    Copy only what the agent needs to run (the package or a built wheel) and keep the
    working directory empty or dedicated to the agent's scratch space:
    ```dockerfile
    COPY dist/*.whl /tmp/
    RUN pip install --require-hashes -r /tmp/requirements.lock /tmp/*.whl
    WORKDIR /work
    ```
    """

    id = "AG201"
    name = "project-in-image-workdir"
    title = "Working directory of the image holds a project"
    default_severity = Severity.HIGH
    family = "mounts"


@register
class HostFolderAtWorkdir(Rule):
    """A host folder is bind-mounted at, above or below the agent's working directory.

    ## What it does
    Compares every bind mount's destination with the effective working directory of the
    container (or of a compose service / devcontainer): a mount at the working
    directory, at a parent of it, or inside it is reported with the host source, the
    destination and whether it is writable.

    ## Why is this bad?
    The agent sees the host folder as its own project: every document, plan, secret and
    `.git` history in it becomes something the model reads and may repeat. A writable
    mount also lets the agent change files on the host.

    ## Example
    ```sh
    docker run -v "$PWD":/app -w /app agent-image
    ```

    ## Use instead
    Do not mount the project into the agent's working directory. Mount only the folder
    the agent needs, read-only, somewhere else, or give it a dedicated volume:
    ```sh
    docker run -v agent-scratch:/work -w /work agent-image
    ```
    """

    id = "AG202"
    name = "host-folder-at-workdir"
    title = "Host folder mounted into the agent's working directory"
    default_severity = Severity.HIGH
    family = "mounts"


@register
class DockerSocketExposed(Rule):
    """The Docker socket is mounted into the container or present in the image.

    ## What it does
    Reports a mount whose source or destination is a Docker engine socket
    (`/var/run/docker.sock`, `/run/docker.sock`, or any `docker.sock`), and a file
    named `docker.sock` inside an image.

    ## Why is this bad?
    Access to the engine's socket is root on the host: the agent can start a privileged
    container that mounts `/`. No other hardening survives it.

    ## Example
    ```sh
    docker run -v /var/run/docker.sock:/var/run/docker.sock agent-image
    ```

    ## Use instead
    Remove the socket mount. If the agent must build or run containers, give it a
    separate, rootless engine or a narrowly scoped API proxy that allows only the calls
    it needs.
    """

    id = "AG203"
    name = "docker-socket-exposed"
    title = "Docker socket mounted or present"
    default_severity = Severity.CRITICAL
    family = "mounts"


@register
class SensitiveHostPathMounted(Rule):
    """A sensitive host path is mounted into the container.

    ## What it does
    Reports bind mounts whose host source is `/`, `/etc`, `/root`, a home folder
    (`/home/<user>`, `/Users/<user>`, `~`), or a credentials folder: `.ssh`, `.aws`,
    `.claude`, `.config/gcloud`, `.kube`, `.docker`, `.gnupg`, `.netrc`.

    ## Why is this bad?
    These paths hold the host's credentials and configuration: SSH keys, cloud tokens,
    the agent's own API credentials. An agent that can read them can leak them; a
    writable mount lets it change them.

    ## Example
    ```sh
    docker run -v "$HOME":/home/agent agent-image
    ```

    ## Use instead
    Mount only the folders the agent needs, read-only, and pass credentials as
    short-lived, narrowly scoped secrets (for example `--secret` or an environment
    variable injected at run time from a secret store).
    """

    id = "AG204"
    name = "sensitive-host-path-mounted"
    title = "Sensitive host path mounted"
    default_severity = Severity.HIGH
    family = "mounts"
