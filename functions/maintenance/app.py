"""EventBridge Scheduler: the nightly maintenance (finish erasures a failure left halfway, make sure the indexes
exist, then every nightly job of app/maintenance/ in order until the invocation's time runs short) and, with
{"schedule": "hourly"}, the hourly jobs (push reminders). Each job resumes next run from where it stopped."""

from functools import cache
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from second_brain.app import operations as ops
from second_brain.app.maintenance.runner import HOURLY, NIGHTLY
from second_brain.aws.composition import AwsBrain, Clients, build_aws
from second_brain.aws.streams import deadline
from second_brain.aws.tracing import TRACED
from second_brain.settings import Settings

logger, tracer, metrics = Logger(), Tracer(patch_modules=TRACED), Metrics(namespace="SecondBrain")


@cache
def brain() -> AwsBrain:
    return build_aws(Settings(), Clients())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)  # memory text stays out of X-Ray
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: Any) -> dict:
    schedule = HOURLY if (event or {}).get("schedule") == HOURLY else NIGHTLY
    # The erasures a failure left halfway are finished first, on the nightly run (AwsBrain.prepare_upkeep).
    done = ops.run_scheduled(brain().brain, schedule, until=deadline(context))
    runs, erased = done["runs"], done["erasures_finished"]
    for run in runs:
        for key, value in run.get("counts", {}).items():
            metrics.add_metric(name=f"{run['job']}.{key}", unit=MetricUnit.Count, value=value)
    metrics.add_metric(name="ErasuresFinished", unit=MetricUnit.Count, value=erased)
    answer = {"ok": True, "schedule": schedule, "runs": runs, "erasures_finished": erased}
    if schedule == NIGHTLY:  # forgets whose erasure even this run could not finish: ErasureBacklogAlarm
        metrics.add_metric(name="ErasuresPending", unit=MetricUnit.Count, value=done["erasures_pending"])
        answer |= {"erasures_pending": done["erasures_pending"], "deletes_expunged": done["deletes_expunged"]}
    logger.info(f"{schedule} maintenance", extra={"runs": runs, "erasures_finished": erased})
    return answer
