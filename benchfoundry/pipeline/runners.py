"""The task runner a build's stages use, from the spec's `runner` section.

`thread` is Prefect's thread pool in the flow's process. `dask` starts a `LocalCluster` of
`workers` processes (or connects to the scheduler at `address`); its workers report their task
runs to the same Prefect API as the flow (the configured one, or this command's embedded
server), and are handed the real strings behind masked model names, which never travel in task
parameters. `ray` starts a local Ray instance of `workers` CPUs (or joins the cluster at
`address`) once for the whole build; its workers get the same two things when they start."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchfoundry.pipeline.spec import RunnerSpec


def _api_url() -> str | None:
    from prefect.settings import PREFECT_API_URL

    if url := PREFECT_API_URL.value():
        return str(url)
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the embedded server this process started, if any
    return server.api_url if server.running else None


@contextmanager
def task_runner(spec: RunnerSpec) -> Iterator[Any]:
    """A Prefect task runner for the stages' flows, or None for Prefect's default."""
    if spec.kind == "thread":
        if spec.workers is None:
            yield None
            return
        from prefect.task_runners import ThreadPoolTaskRunner

        yield ThreadPoolTaskRunner(max_workers=spec.workers)
        return
    if spec.kind == "ray":
        with _ray_runner(spec) as runner:
            yield runner
        return
    try:
        from distributed import Client, LocalCluster
        from prefect_dask import DaskTaskRunner
    except ImportError as exc:  # pragma: no cover - both are dependencies
        raise RuntimeError(f"runner kind 'dask' needs prefect-dask and distributed: {exc}") from exc
    from benchfoundry.gateway.models import remember_all, remembered

    if spec.address:
        with Client(spec.address) as client:
            client.run(remember_all, remembered())
            yield DaskTaskRunner(address=spec.address)
        return
    env = {"PREFECT_API_URL": url} if (url := _api_url()) else {}
    with (
        LocalCluster(
            n_workers=spec.workers or 2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            env=env,
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(remember_all, remembered())
        yield DaskTaskRunner(address=cluster.scheduler_address)


@contextmanager
def _ray_runner(spec: RunnerSpec) -> Iterator[Any]:
    """One Ray instance for every stage of a build (a runner of its own per stage flow would
    start and stop one each time): started here, reused by each stage's `RayTaskRunner`, shut
    down at the end."""
    try:
        import ray
        from prefect_ray import RayTaskRunner
    except ImportError as exc:
        raise RuntimeError(
            f"runner kind 'ray' needs the ray extra (pip install 'benchfoundry[ray]'): {exc}"
        ) from exc
    from benchfoundry.gateway.models import remember_all, remembered

    env = {"PREFECT_API_URL": url} if (url := _api_url()) else {}
    texts = remembered()

    def setup() -> None:  # in each worker as it starts (Ray exports a function, not a partial)
        remember_all(texts)

    runtime_env = {"env_vars": env, "worker_process_setup_hook": setup}
    if ray.is_initialized():
        raise RuntimeError("runner kind 'ray': this process already has a Ray instance")
    if spec.address:
        ray.init(address=spec.address, runtime_env=runtime_env, log_to_driver=False)
    else:
        ray.init(
            num_cpus=spec.workers or 2,
            include_dashboard=False,
            runtime_env=runtime_env,
            log_to_driver=False,
        )
    try:
        yield RayTaskRunner()
    finally:
        ray.shutdown()
