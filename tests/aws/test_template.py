"""What template.yaml and the core layer promise before a deploy: each test reads the template (or the layer's
lock) and fails when that promise is broken. No AWS account, no network."""

import functools
import json
import random
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support.cloudformation import load_template

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "layers/core/requirements.txt"
UNUSED = {"grpcio": "grpc", "protobuf": "google.protobuf", "opensearch-protobufs": "opensearch.protobufs"}




@pytest.fixture(scope="module")
def template() -> dict:
    return load_template()


def _lock() -> dict[str, str]:
    """Package name → pinned version, from the layer's lock file."""
    text = LOCK.read_text()
    assert "--hash=sha256:" in text, "the lock pins hashes (pip --require-hashes)"
    return {_name(m[1]): m[2] for m in re.finditer(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)", text, re.MULTILINE)}


def _name(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package).lower()


# --- the layer (issue 15, item 4) ---


def test_the_layer_is_built_from_src_by_its_own_makefile(template):
    layer = template["Resources"]["CoreLayer"]
    assert layer["Properties"]["ContentUri"].rstrip("/") == "src"
    assert layer["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "layers/core"}
    makefile = (ROOT / "layers/core/Makefile").read_text()
    assert "build-CoreLayer:" in makefile
    # SAM runs the Makefile on a copy of src/ somewhere else: a path out of the checkout breaks plain `sam build`
    assert ".." not in makefile and "CURDIR" not in makefile
    # Bytecode ships, checked by hash (issue 46: without it every cold start compiled every module again, /opt
    # being read-only); nothing removes it after it is made. layers/core/check.py checks the built layer's.
    compile_at = makefile.index("-m compileall -q -j 0 --invalidation-mode unchecked-hash")
    assert "__pycache__" not in makefile[compile_at:]


def test_the_dashboard_is_its_own_layer_from_the_top_level_folder_for_the_api_only(template):
    layer = template["Resources"]["DashboardLayer"]
    assert layer["Properties"]["ContentUri"].rstrip("/") == "dashboard"
    assert layer["Metadata"] == {"BuildMethod": "makefile", "ContextPath": "layers/dashboard"}
    makefile = (ROOT / "layers/dashboard/Makefile").read_text()
    assert "build-DashboardLayer:" in makefile and "python/second_brain/dashboard" in makefile
    assert ".." not in makefile and "CURDIR" not in makefile
    functions = {name: r for name, r in template["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    with_dashboard = [name for name, r in functions.items()
                      if {"Ref": "DashboardLayer"} in r["Properties"].get("Layers", [])]
    assert with_dashboard == ["ApiFunction"]
    assert template["Globals"]["Function"]["Layers"] == [{"Ref": "CoreLayer"}]  # SAM appends the API's


def test_the_package_reads_the_dashboard_from_the_top_level_folder_and_ships_every_file_of_it():
    """setup.py maps dashboard/ into the package; pyproject's package-data must name every kind of file in it,
    or the wheel (and `pip install .`) would leave some out while a checkout still serves them."""
    from importlib.resources import files

    from second_brain.entrypoints.api.dashboard import PACKAGE

    folder = ROOT / "dashboard"
    assert Path(str(files(PACKAGE))) == folder
    assert not (ROOT / "src/second_brain/dashboard").exists(), "one dashboard, at the top"
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "second_brain.dashboard"]
    shipped = {path for pattern in patterns for path in folder.glob(pattern) if path.is_file()}
    present = {path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts
               and path.suffix != ".py"}
    assert present and present <= shipped, sorted(str(p.relative_to(folder)) for p in present - shipped)


def test_traces_never_carry_what_a_handler_answered(template):
    """Powertools' tracer records a handler's response and its exception in the trace by default: memory text,
    kept 30 days in X-Ray whatever a forget erased (issue 46). Off for every function, by default and by hand."""
    import ast

    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["POWERTOOLS_TRACER_CAPTURE_RESPONSE"] == "false"
    assert variables["POWERTOOLS_TRACER_CAPTURE_ERROR"] == "false"
    handlers = sorted((ROOT / "functions").glob("*/app.py"))
    assert len(handlers) == 5
    for path in handlers:
        decorators = [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)
                      and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("capture_")]
        assert decorators, f"{path} traces nothing"
        for call in decorators:
            said = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
            assert said.get("capture_response") is False and said.get("capture_error") is False, path


def test_the_lock_pins_every_dependency_the_layer_needs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["aws"]]
    pinned = _lock()
    for requirement in needed:
        name = _name(requirement.name)
        assert name in pinned, f"{name} is not in {LOCK.name}: run `make layer-lock`"
        assert requirement.specifier.contains(pinned[name]), f"{name}=={pinned[name]} does not meet {requirement}"


def test_the_lock_leaves_out_the_grpc_bindings_nothing_imports():
    pinned = _lock()
    assert not set(UNUSED) & set(pinned), "opensearch-py's gRPC bindings are never imported: keep them out"
    imports = re.compile(r"^\s*(import|from)\s+(" + "|".join(re.escape(m) for m in UNUSED.values()) + r")\b",
                         re.MULTILINE)
    sources = [*(ROOT / "src").rglob("*.py"), *(ROOT / "functions").rglob("*.py")]
    import opensearchpy  # the client as installed here: the layer pins the same version (checked below)
    sources += Path(opensearchpy.__file__).parent.rglob("*.py")
    assert opensearchpy.__versionstr__ == pinned["opensearch-py"], "compare against the pinned opensearch-py"
    offenders = [str(path) for path in sources if imports.search(path.read_text(errors="replace"))]
    assert not offenders, f"these import a package the layer leaves out: {offenders}"


# --- names and parameters (item 5) ---

# Top-level properties that set a resource's physical name: a literal one collides with a second stack.
NAME_PROPERTIES = {"TableName", "FunctionName", "QueueName", "TopicName", "DomainName", "AlarmName", "LogGroupName",
                   "LayerName", "RoleName", "ManagedPolicyName", "Name", "BucketName", "SecretName", "ApiName"}


def _stack_derived(value: object) -> bool:
    return "AWS::StackName" in json.dumps(value) or "AWS::StackId" in json.dumps(value)


def test_no_resource_has_a_fixed_physical_name(template):
    fixed = []
    for name, resource in template["Resources"].items():
        properties = resource.get("Properties", {})
        fixed += [f"{name}.{key}" for key in NAME_PROPERTIES & set(properties)
                  if not _stack_derived(properties[key])
                  and _ref(properties[key]) not in template["Resources"]]  # naming another resource is no name
        if resource["Type"] == "AWS::Serverless::LayerVersion" and "LayerName" not in properties:
            fixed.append(f"{name}: SAM names the layer {name}")
        for event, spec in properties.get("Events", {}).items():
            if spec["Type"] == "ScheduleV2" and not spec["Properties"].get("OmitName") and not _stack_derived(
                    spec["Properties"].get("Name", "")):
                fixed.append(f"{name}.{event}: SAM names the schedule {name}{event}")
    assert not fixed, f"fixed physical names: {fixed}"


def _value(expression: object, parameters: dict[str, str], conditions: dict | None = None) -> object:
    """A rule's or a condition's expression, evaluated as CloudFormation would (the functions they may use)."""
    if isinstance(expression, list):
        return [_value(item, parameters, conditions) for item in expression]
    if not isinstance(expression, dict):
        return str(expression)
    (function, argument), = expression.items()
    if function == "Ref":
        return parameters[argument]
    if function == "Condition":
        return _value(conditions[argument], parameters, conditions)
    arguments = _value(argument, parameters, conditions)
    match function:
        case "Fn::Equals":
            return arguments[0] == arguments[1]
        case "Fn::Not":
            return not arguments[0]
        case "Fn::And":
            return all(arguments)
        case "Fn::Or":
            return any(arguments)
        case "Fn::Contains":
            return arguments[1] in arguments[0]
        case "Fn::EachMemberEquals":
            return all(member == arguments[1] for member in _members(arguments[0]))
        case "Fn::Join":
            return arguments[0].join(_members(arguments[1]))
    raise NotImplementedError(function)


def _members(value: object) -> list:
    """A list parameter's members (its value is given as the comma-separated string a deploy passes)."""
    return value if isinstance(value, list) else str(value).split(",")


def _parameters(template: dict, **overrides: object) -> dict[str, str]:
    """Every parameter's value: its default unless given."""
    parameters = {name: str(p.get("Default", "")) for name, p in template["Parameters"].items()}
    parameters["AWS::Region"] = "us-east-1"  # the pseudo parameter, where a deploy is made unless said otherwise
    return parameters | {name: str(value) for name, value in overrides.items()}


def _resolved(value: object, template: dict, **overrides: object) -> object:
    """A property's value once its Fn::If and Ref of parameters are resolved (None: AWS::NoValue)."""
    parameters = _parameters(template, **overrides)
    while isinstance(value, dict) and "Fn::If" in value:
        condition, yes, no = value["Fn::If"]
        value = yes if _value(template["Conditions"][condition], parameters, template["Conditions"]) else no
    if _ref(value) == "AWS::NoValue":
        return None
    return parameters.get(_ref(value), value) if isinstance(value, dict) and "Ref" in value else value


def _refused(template: dict, **overrides: object) -> list[str]:
    """The rules a deploy with these parameters breaks (the rest at their defaults)."""
    parameters = _parameters(template, **overrides)
    return [name for name, rule in template.get("Rules", {}).items()
            if _value(rule.get("RuleCondition", True), parameters) is not False
            and not all(_value(a["Assert"], parameters) for a in rule["Assertions"])]


@pytest.mark.parametrize("parameters", [
    {"Embedder": "bedrock", "EmbeddingDimension": 384},
    {"Embedder": "bedrock", "EmbeddingDimension": 768},
    {"Embedder": "bedrock", "EmbeddingModelId": "amazon.titan-embed-text-v1"},
    {"Embedder": "sagemaker", "EmbeddingDimension": 384, "EmbeddingEndpointName": ""},
    {"Reranker": "sagemaker", "RerankerEndpointName": ""},
    {"RestoredTableName": "brain-restored", "RestoredTableStreamArn": ""},
    {"VpcSubnetIds": "subnet-1,subnet-2"},
    {"VpcRouteTableIds": "rtb-1"},
    {"VpcInterfaceEndpoints": "create"},
])
def test_rules_refuse_what_would_fail_at_the_first_request(template, parameters):
    assert _refused(template, **parameters), f"a deploy with {parameters} would pass"


@pytest.mark.parametrize("parameters", [
    {},
    {"Embedder": "bedrock", "EmbeddingDimension": 256},
    {"Embedder": "sagemaker", "EmbeddingDimension": 384, "EmbeddingEndpointName": "bge-small"},
    {"Embedder": "sagemaker", "EmbeddingDimension": 768, "EmbeddingEndpointName": "e5-base"},
    {"Reranker": "sagemaker", "RerankerEndpointName": "bge-reranker"},
    {"Reranker": "bedrock", "LanguageModel": "bedrock"},
    {"VpcSubnetIds": "subnet-1,subnet-2", "VpcId": "vpc-1"},
])
def test_rules_let_valid_settings_through(template, parameters):
    assert not _refused(template, **parameters)


def test_the_bedrock_rule_allows_exactly_what_the_titan_adapter_does(template):
    from second_brain.adapters.embedder.bedrock import TITAN_DIMENSIONS, TITAN_V2
    offered = template["Parameters"]["EmbeddingDimension"]["AllowedValues"]
    allowed = {d for d in offered if not _refused(template, Embedder="bedrock", EmbeddingDimension=d)}
    assert allowed == set(TITAN_DIMENSIONS)
    assert not _refused(template, Embedder="bedrock", EmbeddingModelId=TITAN_V2)


# --- timeouts (item 6) ---


# Run by CloudFormation during a deploy, not by the brain: a failure fails the deploy (no alarm), and its role is
# its own (tested on its own below).
DEPLOY_TIME = {"SearchAccessSetupFunction"}


def _functions(template: dict) -> dict[str, dict]:
    """Each of the brain's functions' properties with the Globals it inherits (its own win)."""
    shared = template.get("Globals", {}).get("Function", {})
    return {name: shared | r["Properties"] for name, r in template["Resources"].items()
            if r["Type"] == "AWS::Serverless::Function" and name not in DEPLOY_TIME}


def test_request_functions_stop_before_api_gateway_does(template):
    serving = {name: f for name, f in _functions(template).items()
               if "FunctionUrlConfig" in f or any(e["Type"] == "Api" for e in f.get("Events", {}).values())}
    assert set(serving) == {"ApiFunction", "McpFunction"}
    for name, function in serving.items():
        assert function["Timeout"] <= 28, f"{name}: API Gateway answers 504 at 29 s while the function runs on"


# --- operations: logs, alarms, the nightly job's failures, the stream filter (item 7) ---


def _resources(template: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def _ref(value: object) -> str | None:
    """The logical id a Ref or GetAtt points at."""
    if isinstance(value, dict) and "Ref" in value:
        return value["Ref"]
    if isinstance(value, dict) and "Fn::GetAtt" in value:
        return value["Fn::GetAtt"][0]
    return None


def test_every_function_logs_to_a_group_it_keeps_for_a_while(template):
    groups = _resources(template, "AWS::Logs::LogGroup")
    for name, function in _functions(template).items():
        group = _ref(function.get("LoggingConfig", {}).get("LogGroup"))
        assert group in groups, f"{name} logs to Lambda's default group, which never expires"
        retention = groups[group]["Properties"].get("RetentionInDays")
        days = template["Parameters"][retention["Ref"]]["Default"] if _ref(retention) else retention
        assert days and days <= 365, f"{name}'s logs are kept for {days} days"


def _alarms(template: dict) -> list[tuple[str, str, str | None]]:
    """(namespace, metric, the resource its dimension names) for each alarm that notifies the alarm topic."""
    topics = set(_resources(template, "AWS::SNS::Topic"))
    watched = []
    for name, alarm in _resources(template, "AWS::CloudWatch::Alarm").items():
        p = alarm["Properties"]
        assert {_ref(a) for a in p.get("AlarmActions", [])} & topics, f"{name} notifies nobody"
        for dimension in p.get("Dimensions", []):
            watched.append((p["Namespace"], p["MetricName"], _ref(dimension["Value"])))
    return watched


def test_alarms_watch_the_projector_the_failure_queues_and_every_function(template):
    watched = _alarms(template)
    assert ("AWS/Lambda", "IteratorAge", "ProjectorFunction") in watched
    for queue in _resources(template, "AWS::SQS::Queue"):
        assert ("AWS/SQS", "ApproximateNumberOfMessagesVisible", queue) in watched, f"nobody hears of {queue}"
    for function in _functions(template):
        assert ("AWS/Lambda", "Errors", function) in watched, f"{function}'s errors raise no alarm"


def test_a_nightly_run_that_fails_is_retried_and_then_kept(template):
    maintenance = _functions(template)["MaintenanceFunction"]
    queues = set(_resources(template, "AWS::SQS::Queue"))
    schedule = maintenance["Events"]["Nightly"]["Properties"]
    assert maintenance["Events"]["Nightly"]["Type"] == "ScheduleV2"
    assert _ref(schedule["DeadLetterConfig"]["Arn"]) in queues, "a run the scheduler cannot start is lost"
    assert schedule["RetryPolicy"]["MaximumRetryAttempts"] >= 1
    api = _functions(template)["ApiFunction"]
    assert float(api["Environment"]["Variables"]["BRAIN_MAINTENANCE_REQUEST_SECONDS"]) < api["Timeout"] - 5, \
        "POST /maintenance/run must answer before the function is stopped mid-run (its lease then holds 30 min)"
    hourly = maintenance["Events"]["Hourly"]["Properties"]
    assert hourly["ScheduleExpression"] == "rate(1 hour)" and json.loads(hourly["Input"]) == {"schedule": "hourly"}
    assert _ref(hourly["DeadLetterConfig"]["Arn"]) in queues
    invoke = maintenance["EventInvokeConfig"]
    assert _ref(invoke["DestinationConfig"]["OnFailure"]["Destination"]) in queues, "a failed run is lost"


def _delivered(patterns: list[dict], record: dict) -> bool:
    """Whether a mapping with these filter patterns invokes its function for this record (any one matching)."""
    return any(_matches(p, record) for p in patterns)


def _matches(pattern: object, value: object) -> bool:
    """Lambda's event filtering, for the operators the template uses."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(key in value and _matches(p, value[key]) for key, p in pattern.items())
    for option in pattern:
        if isinstance(option, dict) and "anything-but" in option:
            if value not in option["anything-but"]:
                return True
        elif isinstance(option, dict) and "exists" in option:
            if option["exists"]:
                return True  # reached: the key is there (a missing key fails in the dict branch above)
        elif isinstance(option, dict) and "prefix" in option:
            if isinstance(value, str) and value.startswith(option["prefix"]):
                return True
        elif option == value:
            return True
    return False


def _stream_filters(template: dict) -> list[list[dict]]:
    """The filter patterns of every mapping from a DynamoDB stream to a function."""
    mappings = [r["Properties"] for r in _resources(template, "AWS::Lambda::EventSourceMapping").values()]
    mappings += [e["Properties"] for f in _functions(template).values()
                 for e in f.get("Events", {}).values() if e["Type"] == "DynamoDB"]
    assert mappings, "no stream mapping found"
    return [[json.loads(f["Pattern"]) for f in m.get("FilterCriteria", {}).get("Filters", [])] for m in mappings]


def _record(event_name: str, item: dict) -> dict:
    keys = {k: item[k] for k in ("stream_id", "version")}
    return {"eventName": event_name, "dynamodb": {"Keys": keys, "NewImage": item}}


def test_the_projector_is_invoked_for_events_only(template):
    """The items an append writes, as the store writes them: the projector hears of the events, not of the
    position claims, the parts of a large event or the erasure markers."""
    from second_brain.adapters.event_store.dynamodb import _item, _key
    from second_brain.domain.events import MemoryCaptured, MemoryForgotten
    from tests.conftest import envelope

    rng = random.Random(5)  # random characters: too many for one item even compressed
    text = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(200_000))
    big = envelope("memory-big", 1, MemoryCaptured(text, (), "api", "personal-owner"), at=1)
    item, parts = _item(big, ("all#00",))
    assert parts, "the note is large enough to be stored in parts"
    events = [item, _item(envelope("link-related-3f9c-7b1d", 1, MemoryForgotten()), ("all#00",))[0]]
    others = [*parts, {**_key("$log", 0), "partitions": {"N": "16"}},
              {**_key("$slot#123456", 0), "expires": {"N": "1"}},
              {**_key("$erase#pending", 9), "target": {"S": "memory-big"}, "before": {"N": "2"}}]
    for patterns in _stream_filters(template):
        assert patterns, "the projector is invoked for every record, position claims included"
        delivered = functools.partial(_delivered, patterns)
        for other in others:
            assert not delivered(_record("INSERT", other)) and not delivered(_record("MODIFY", other))
        for event in events:
            assert delivered(_record("INSERT", event)) and delivered(_record("MODIFY", event))  # MODIFY: erased


# --- the public MCP URL and the REST API's rate (item 8) ---


def test_the_public_mcp_function_has_a_concurrency_cap(template):
    mcp = _functions(template)["McpFunction"]
    assert mcp["FunctionUrlConfig"]["AuthType"] == "NONE"  # so the cap is what bounds a stranger's bill
    cap = _resolved(mcp.get("ReservedConcurrentExecutions"), template)
    assert cap is not None and 1 <= int(cap) <= 20, f"the MCP function's reserved concurrency by default: {cap}"
    assert _resolved(mcp["ReservedConcurrentExecutions"], template, McpReservedConcurrency=0) is None  # opt-out
    assert ("AWS/Lambda", "Throttles", "McpFunction") in _alarms(template), "nobody hears when the cap is hit"


def test_the_rest_api_stage_is_throttled(template):
    settings = template["Globals"]["Api"]["MethodSettings"]
    everything = [m for m in settings if m["ResourcePath"] == "/*" and m["HttpMethod"] == "*"]
    assert everything, "no throttling for every route of the stage"
    rate = int(_resolved(everything[0]["ThrottlingRateLimit"], template))
    burst = int(_resolved(everything[0]["ThrottlingBurstLimit"], template))
    assert 1 <= rate <= burst <= 1000, (rate, burst)


def test_one_client_cannot_use_up_the_stage_throttle_that_every_client_shares(template):
    """Issue 66 item 4: the stage's throttle (20/s) is shared by every client, so a stranger with any token (or
    none) could lock the owner out. A regional web ACL limits each bearer token, and apart each address, to
    ApiRateLimitPerClient requests a minute (well under the stage's), answering 429 in the API's envelope."""
    resources, parameters = template["Resources"], template["Parameters"]
    limit = parameters["ApiRateLimitPerClient"]
    rate = int(_resolved(template["Globals"]["Api"]["MethodSettings"][0]["ThrottlingRateLimit"], template))
    assert 10 <= int(limit["Default"]) < rate * 60
    acl = resources["ApiWebAcl"]
    assert acl["Condition"] == "ApiClientLimit" and acl["Properties"]["Scope"] == "REGIONAL"
    body = json.loads(acl["Properties"]["CustomResponseBodies"]["too-many"]["Content"])
    assert body["ok"] is False and body["error"]
    rules = {rule["Name"]: rule for rule in acl["Properties"]["Rules"]}
    token, address = rules["requests-per-token"]["Statement"]["RateBasedStatement"], rules[
        "requests-per-address"]["Statement"]["RateBasedStatement"]
    assert token["CustomKeys"] == [{"Header": {"Name": "authorization",
                                               "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}]
    assert address["AggregateKeyType"] == "IP"
    for statement in (token, address):
        assert statement["Limit"] == {"Ref": "ApiRateLimitPerClient"} and statement["EvaluationWindowSec"] == 60
    for rule in rules.values():
        assert rule["Action"] == {"Block": {"CustomResponse": {"ResponseCode": 429,
                                                               "CustomResponseBodyKey": "too-many"}}}
    # sampled requests would keep each request's Authorization header: none are kept
    assert not any(v["SampledRequestsEnabled"] for v in [acl["Properties"]["VisibilityConfig"],
                                                         *(r["VisibilityConfig"] for r in rules.values())])
    association = resources["ApiWebAclAssociation"]
    assert association["Properties"]["WebACLArn"] == {"Fn::GetAtt": ["ApiWebAcl", "Arn"]}
    assert association["Properties"]["ResourceArn"] == {
        "Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${ServerlessRestApi}/stages/Prod"}
    condition = template["Conditions"]["ApiClientLimit"]
    assert _value(condition, _parameters(template), template["Conditions"]) is True
    assert _value(condition, _parameters(template, ApiRateLimitPerClient=0), template["Conditions"]) is False


# --- least privilege (item 9) ---

# SAM policy templates the functions may use, as the statements they expand to (actions only).
SAM_POLICY_TEMPLATES = {
    "DynamoDBStreamReadPolicy": ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
                                 "dynamodb:ListStreams"],
    "SQSSendMessagePolicy": ["sqs:SendMessage*"],
    "AWSSecretsManagerGetSecretValuePolicy": ["secretsmanager:GetSecretValue"],
}

# What each boto3 call of the event store needs from IAM (TransactWriteItems needs each item's own action).
DYNAMODB_ACTIONS = {"get_item": "GetItem", "batch_get_item": "BatchGetItem", "query": "Query", "put_item": "PutItem",
                    "update_item": "UpdateItem", "delete_item": "DeleteItem", "scan": "Scan",
                    "batch_write_item": "BatchWriteItem", "describe_table": "DescribeTable",
                    "transact_get_items": "GetItem"}
TRANSACTION_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                       "ConditionCheck": "ConditionCheckItem"}


def _listed(value: object) -> list:
    return value if isinstance(value, list) else [value]


def _unless(value: object) -> tuple[set[str], object]:
    """The conditions a value depends on (Fn::If's true branch) and the value itself; None for AWS::NoValue."""
    conditions = set()
    while isinstance(value, dict) and "Fn::If" in value:
        condition, yes, _ = value["Fn::If"]
        conditions.add(condition)
        value = yes
    return conditions, None if _ref(value) == "AWS::NoValue" else value


def _statements(template: dict, function: str) -> list[dict]:
    """Every Allow statement a function's policies grant, with the template conditions it is granted under."""
    granted = []

    def add(statements: object, conditions: set[str]) -> None:
        for raw in _listed(statements):
            more, statement = _unless(raw)
            if statement is not None:
                granted.append({"conditions": conditions | more, "actions": _listed(statement["Action"]),
                                "resources": _listed(statement.get("Resource", [])),
                                "condition": statement.get("Condition")})

    for raw in _functions(template)[function].get("Policies", []):
        conditions, policy = _unless(raw)
        if policy is None:
            continue
        managed = _ref(policy)
        if managed:
            resource = template["Resources"][managed]
            assert resource["Type"] == "AWS::IAM::ManagedPolicy", f"{function}: {managed}"
            add(resource["Properties"]["PolicyDocument"]["Statement"],
                conditions | ({resource["Condition"]} if "Condition" in resource else set()))
        elif "Statement" in policy:
            add(policy["Statement"], conditions)
        else:
            (name, _), = policy.items()
            assert name in SAM_POLICY_TEMPLATES, f"{function} uses {name}: list what it grants here"
            granted.append({"conditions": conditions, "actions": SAM_POLICY_TEMPLATES[name], "resources": [name],
                            "condition": None})
    return granted


def _actions(template: dict, function: str, prefix: str) -> set[str]:
    return {a for s in _statements(template, function) for a in s["actions"] if a.startswith(prefix)}


def test_the_event_log_policy_holds_exactly_the_calls_the_store_makes(template):
    source = (ROOT / "src/second_brain/adapters/event_store/dynamodb.py").read_text()
    calls = set(re.findall(r"self\.client\.(\w+)\(", source))
    keys = (ROOT / "src/second_brain/adapters/event_store/keys.py").read_text()
    calls |= set(re.findall(r"self\.dynamodb\.(\w+)\b", keys))  # the key table's: made, read, destroyed
    tally = (ROOT / "src/second_brain/adapters/event_store/tally.py").read_text()
    calls |= set(re.findall(r"self\.client\.(\w+)\b", tally))  # recalls noted, read back, dropped
    assert calls - set(DYNAMODB_ACTIONS) <= {"transact_write_items"}, f"map these calls to IAM: {calls}"
    needed = {DYNAMODB_ACTIONS[c] for c in calls if c != "transact_write_items"}
    if "transact_write_items" in calls:
        needed |= {TRANSACTION_ACTIONS[kind] for kind in re.findall(r'\{"(Put|Update|Delete|ConditionCheck)":', source)}
    assert "DynamoDBCrudPolicy" not in json.dumps(template["Resources"]), "the CRUD policy grants Scan, BatchWrite…"
    item_actions = {f"dynamodb:{a}" for a in needed}
    for function in _functions(template):
        granted = _actions(template, function, "dynamodb:") - set(SAM_POLICY_TEMPLATES["DynamoDBStreamReadPolicy"])
        assert granted == item_actions, f"{function}: grants {sorted(granted)}, the store calls {sorted(needed)}"


def test_the_functions_can_delete_no_event(template):
    from second_brain.adapters.event_store import dynamodb
    from second_brain.adapters.event_store.tally import TALLY_PREFIX
    deletes = [s for f in _functions(template) for s in _statements(template, f)
               if "dynamodb:DeleteItem" in s["actions"] and "KeysTable" not in json.dumps(s["resources"])]
    # Only the parts of an erased event's data (under their own key prefix), the markers of pending erasures and
    # the recalls noted outside the log once they are folded into it.
    allowed = [f"{dynamodb.PART_PREFIX}*", dynamodb.ERASURES, f"{TALLY_PREFIX}*"]
    for statement in deletes:
        assert statement["condition"] == {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": allowed}}, statement


def test_models_are_granted_by_their_configured_ids_only(template):
    from second_brain.adapters.reranker.bedrock import COHERE_RERANK
    for function in _functions(template):
        for statement in _statements(template, function):
            services = {a.split(":")[0] for a in statement["actions"]}
            if not services & {"bedrock", "sagemaker"}:
                continue
            for resource in statement["resources"]:
                text = json.dumps(resource)
                if statement["actions"] == ["bedrock:Rerank"]:  # no resource type: * under the reranker's condition
                    assert "BedrockReranker" in statement["conditions"] and resource == "*", statement
                elif "foundation-model/*" in text:  # a profile's Regions, only through that profile
                    assert "bedrock:InferenceProfileArn" in json.dumps(statement["condition"]), statement
                else:
                    named = ("EmbeddingModelId", "LanguageModelId", "EmbeddingEndpointName", "RerankerEndpointName")
                    assert any(f"${{{p}}}" in text for p in named) or f"foundation-model/{COHERE_RERANK}" in text, (
                        f"{function} may call {resource}")


def test_each_function_gets_only_what_it_calls(template):
    recall_models = {"bedrock:Rerank", "sagemaker:InvokeEndpoint"}
    for function in _functions(template):
        answers_requests = function in ("ApiFunction", "McpFunction")
        statements = _statements(template, function)
        actions = {a for s in statements for a in s["actions"]}
        owner_token = [s for s in statements if {"Ref": "OwnerTokenSecretArn"} in s["resources"]]
        assert bool(owner_token) == answers_requests, f"{function} and the token"
        # an integration's secrets: made by a connect, deleted by a disconnect (the API), read by the hourly sync
        kept = [s for s in statements if any(a.startswith("secretsmanager:") for a in s["actions"])
                and s not in owner_token]
        assert bool(kept) == (function in ("ApiFunction", "MaintenanceFunction")), f"{function} and integrations"
        for statement in kept:
            assert statement["resources"] == [{"Fn::Sub": "arn:${AWS::Partition}:secretsmanager:${AWS::Region}:"
                                                          "${AWS::AccountId}:secret:${AWS::StackName}/integrations/*"}]
            assert sorted(statement["actions"]) == ["secretsmanager:CreateSecret", "secretsmanager:DeleteSecret",
                                                    "secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"]
        assert ("dynamodb:GetRecords" in actions) == (function == "ProjectorFunction"), f"{function} and the stream"
        assert ("sqs:SendMessage*" in actions) == (function == "ProjectorFunction"), f"{function} and the queue"
        assert ("bedrock:Rerank" in actions) == answers_requests, f"{function} and the reranker"
        converses = "bedrock:InvokeModelWithResponseStream" in actions  # the language model
        assert converses == (answers_requests or function == "MaintenanceFunction"), f"{function} and the model"
        assert any("EmbeddingModelId" in json.dumps(s["resources"]) for s in statements), f"{function} embeds"
        memory_keys = [s for s in statements if s["resources"] == [{"Fn::GetAtt": ["DataKey", "Arn"]}]]
        assert [sorted(s["actions"]) for s in memory_keys] == [["kms:Decrypt", "kms:GenerateDataKey"]], function
        decrypt = [s for s in statements if "kms:Decrypt" in s["actions"] and s not in memory_keys]
        assert bool(decrypt) == answers_requests, f"{function} and the secret's key"
        for statement in decrypt:  # the token secret's key, through Secrets Manager, when one is configured
            assert "SecretHasKmsKey" in statement["conditions"]
            assert statement["resources"] == [{"Ref": "OwnerTokenSecretKmsKeyArn"}]
            assert "kms:ViaService" in json.dumps(statement["condition"])
        if not answers_requests:
            assert not actions & recall_models - {"sagemaker:InvokeEndpoint"}
            assert "RerankerEndpointName" not in json.dumps([s["resources"] for s in statements])


def test_the_search_domain_is_reached_by_the_function_roles_on_this_domain_only(template):
    """Issue 46: the access policy named `domain/*`. The domain now has no resource policy (one cannot name the
    domain it belongs to); each function's role is granted HTTP calls on this one domain's ARN, and nothing else
    in any function's policies grants an OpenSearch action."""
    assert "AccessPolicies" not in template["Resources"]["SearchDomain"]["Properties"]
    [statement] = template["Resources"]["SearchAccess"]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and all(a.startswith("es:ESHttp") for a in statement["Action"])
    assert statement["Resource"] == {"Fn::Sub": "${SearchDomain.Arn}/*"}
    for name, function in _functions(template).items():
        assert {"Ref": "SearchAccess"} in function["Policies"], f"{name} cannot reach the domain"
        searching = [s["resources"] for s in _statements(template, name)
                     if any(a.startswith("es:") for a in s["actions"])]
        assert searching == [[{"Fn::Sub": "${SearchDomain.Arn}/*"}]], f"{name} reaches search elsewhere: {searching}"


def test_the_search_domain_is_sized_by_parameters_and_logs_what_is_slow(template):
    domain = template["Resources"]["SearchDomain"]["Properties"]
    cluster = domain["ClusterConfig"]
    assert _resolved(cluster["InstanceCount"], template) == "1"  # the dev default, unchanged
    assert _resolved(cluster["ZoneAwarenessEnabled"], template) is False
    assert _resolved(cluster["DedicatedMasterEnabled"], template) is False
    production = {"SearchInstanceCount": 3, "SearchZoneCount": 3, "SearchReplicas": 1,
                  "SearchDedicatedMasterType": "m6g.large.search"}
    assert not _refused(template, **production)
    assert _resolved(cluster["InstanceCount"], template, **production) == "3"
    assert _resolved(cluster["ZoneAwarenessEnabled"], template, **production) is True
    assert _resolved(cluster["ZoneAwarenessConfig"], template, **production) == {
        "AvailabilityZoneCount": {"Ref": "SearchZoneCount"}}
    assert _resolved(cluster["DedicatedMasterType"], template, **production) == "m6g.large.search"
    assert _resolved(cluster["DedicatedMasterCount"], template, **production) == 3
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert _resolved(variables["BRAIN_OPENSEARCH_REPLICAS"], template, **production) == "1"
    logs = {kind: _resolved(option, template, SearchAccessControl="fine-grained", SlowLogs="on")
            for kind, option in domain["LogPublishingOptions"].items()}
    assert set(logs) == {"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS", "AUDIT_LOGS"}
    # The slow logs hold query and document text (a forgotten memory's too): published only when asked for.
    assert template["Parameters"]["SlowLogs"]["Default"] == "off"
    assert [kind for kind, option in domain["LogPublishingOptions"].items()
            if _resolved(option, template) is not None] == ["ES_APPLICATION_LOGS"]
    # the audit log needs fine-grained access control: without it the domain would refuse the deploy
    assert _resolved(domain["LogPublishingOptions"]["AUDIT_LOGS"], template) is None
    groups = {_ref(option["CloudWatchLogsLogGroupArn"]) for option in logs.values()}
    for group in groups:
        assert template["Resources"][group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionInDays"}
    written = json.dumps(template["Resources"]["SearchLogsPolicy"]["Properties"]["PolicyDocument"])
    assert len(groups) == 4 and all(f"${{{group}.Arn}}" in written for group in groups)
    assert '"Resource": "*"' not in written
    assert template["Resources"]["SearchDomain"]["DependsOn"] == "SearchLogsPolicy"


def test_the_log_cannot_be_deleted_by_a_slip(template):
    table = template["Resources"]["EventsTable"]
    assert table["Properties"]["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"


def test_alarms_watch_the_search_domain_the_log_and_the_embedder(template):
    alarms = {(a["Properties"]["Namespace"], a["Properties"]["MetricName"]): a["Properties"]
              for a in _resources(template, "AWS::CloudWatch::Alarm").values()}
    for metric in ("ClusterStatus.red", "FreeStorageSpace", "JVMMemoryPressure", "ClusterIndexWritesBlocked"):
        dimensions = {d["Name"]: d["Value"] for d in alarms[("AWS/ES", metric)]["Dimensions"]}
        assert dimensions == {"DomainName": {"Ref": "SearchDomain"}, "ClientId": {"Ref": "AWS::AccountId"}}, metric
    assert alarms[("AWS/ES", "FreeStorageSpace")]["Threshold"] == {"Ref": "SearchFreeStorageAlarmMiB"}
    for metric in ("ThrottledRequests", "TransactionConflict"):
        [dimension] = alarms[("AWS/DynamoDB", metric)]["Dimensions"]
        assert _resolved(dimension["Value"], template) == {"Ref": "EventsTable"}, metric
        assert _resolved(dimension["Value"], template, RestoredTableName="restored") == "restored", metric
    [model] = alarms[("AWS/Bedrock", "InvocationThrottles")]["Dimensions"]
    assert model == {"Name": "ModelId", "Value": {"Ref": "EmbeddingModelId"}}


def test_alarms_say_a_forget_left_unfinished_a_request_around_the_edge_and_the_keys_key_changing(template):
    """Issue 66 item 4: the metrics the functions emit, each watched; and the KMS key every memory's key is wrapped
    with raises an alarm the moment it is disabled or scheduled for deletion (CloudTrail's record, via EventBridge)."""
    functions = Path(__file__).resolve().parents[2] / "functions"
    service = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
    alarms = {a["Properties"]["MetricName"]: a for a in _resources(template, "AWS::CloudWatch::Alarm").values()
              if a["Properties"]["Namespace"] == "SecondBrain"}
    for metric, function, condition in (("ErasuresPending", "maintenance", None), ("AroundTheEdge", "mcp", "McpEdge")):
        assert f'name="{metric}"' in (functions / function / "app.py").read_text(), metric  # what it watches is sent
        alarm = alarms[metric]
        assert alarm["Properties"]["Dimensions"] == [{"Name": "service", "Value": service}]
        assert alarm["Properties"]["Threshold"] == 0 and alarm["Properties"]["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert alarm.get("Condition") == condition
    rule = template["Resources"]["DataKeyStateRule"]["Properties"]
    pattern = rule["EventPattern"]
    assert pattern["detail"]["resources"]["ARN"] == [{"Fn::GetAtt": ["DataKey", "Arn"]}]
    assert {"DisableKey", "ScheduleKeyDeletion"} <= set(pattern["detail"]["eventName"])
    assert [target["Arn"] for target in rule["Targets"]] == [{"Ref": "AlarmTopic"}]
    [allowed] = template["Resources"]["AlarmTopicPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert allowed["Principal"] == {"Service": "events.amazonaws.com"} and allowed["Action"] == "sns:Publish"
    assert allowed["Condition"] == {"ArnEquals": {"aws:SourceArn": {"Fn::GetAtt": ["DataKeyStateRule", "Arn"]}}}


def test_the_stream_mapping_brings_no_account_wide_stream_policy(template):
    # SAM's DynamoDB event attaches AWSLambdaDynamoDBExecutionRole (every stream in the account): declare it.
    for name, function in _functions(template).items():
        assert all(e["Type"] != "DynamoDB" for e in function.get("Events", {}).values()), name
    mappings = _resources(template, "AWS::Lambda::EventSourceMapping").values()
    assert [_ref(m["Properties"]["FunctionName"]) for m in mappings] == ["ProjectorFunction"]


KEYS = {"Fn::GetAtt": ["KeysTable", "Arn"]}


def test_a_restored_table_is_switched_to_by_parameters_the_next_deploy_keeps(template):
    restored = {"RestoredTableName": "brain-restored", "RestoredTableStreamArn": "arn:aws:dynamodb:eu-west-1:1:table/"
                "brain-restored/stream/2026-12-01T00:00:00.000"}
    assert not _refused(template, **restored)
    environment = template["Globals"]["Function"]["Environment"]["Variables"]
    assert _resolved(environment["BRAIN_EVENTS_TABLE"], template, **restored) == "brain-restored"
    assert _resolved(environment["BRAIN_EVENTS_TABLE"], template) == {"Ref": "EventsTable"}
    mapping = template["Resources"]["ProjectorFunctionLog"]["Properties"]["EventSourceArn"]
    assert "RestoredTableStreamArn" in json.dumps(_resolved(mapping, template, **restored))
    for function in _functions(template):
        tables = [_resolved(r, template, **restored) for s in _statements(template, function)
                  if any(a.startswith("dynamodb:") for a in s["actions"]) for r in s["resources"]]
        # the memories' keys stay where they are: the restored log's events are sealed with them
        assert tables and all("RestoredTableName" in json.dumps(t) or t in ("DynamoDBStreamReadPolicy", KEYS)
                              for t in tables), f"{function} keeps the old table: {tables}"
    stream_policy = _functions(template)["ProjectorFunction"]["Policies"]
    assert "RestoredTableName" in json.dumps(stream_policy), "the projector cannot read the restored stream"


# --- the template as SAM expands it (needs the SAM translator from `make validate`'s tools venv) ---

TOOLS_PYTHON = ROOT / ".venv-tools/bin/python"
EXPAND = """
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

class NoManagedPolicies:
    def load(self):
        return {}

template = yaml_parse(open(sys.argv[1]).read())
for resource in template["Resources"].values():  # as `sam validate` does: local code is uploaded to S3 later
    for key in ("CodeUri", "ContentUri"):
        if isinstance(resource.get("Properties", {}).get(key), str):
            resource["Properties"][key] = "s3://bucket/" + resource["Properties"][key]
print(json.dumps(transform(template, {"AWS::Region": "us-east-1"}, NoManagedPolicies())))
"""


@pytest.fixture(scope="module")
def expanded() -> dict:
    if not TOOLS_PYTHON.exists():
        pytest.skip("the SAM translator lives in .venv-tools: run `make validate` first")
    import subprocess
    result = subprocess.run([str(TOOLS_PYTHON), "-c", EXPAND, str(ROOT / "template.yaml")], capture_output=True,
                            text=True, env={"AWS_DEFAULT_REGION": "us-east-1", "PATH": "/usr/bin:/bin"}, check=True)
    return json.loads(result.stdout)


def test_sam_adds_no_fixed_name_and_no_account_wide_policy(expanded):
    resources = expanded["Resources"]
    for name, resource in resources.items():
        properties = resource.get("Properties", {})
        fixed = [key for key in NAME_PROPERTIES & set(properties)
                 if not _stack_derived(properties[key]) and _ref(properties[key]) not in resources]
        assert not fixed, f"SAM gave {name} the fixed {fixed}"
    vpc = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
    allowed = {"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
               "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess", vpc}
    deny = {"Fn::If": ["OutsideVpc", {"Ref": "NoNetworkInterfaces"}, {"Ref": "AWS::NoValue"}]}
    for name, role in resources.items():
        if role["Type"] == "AWS::IAM::Role":
            attached = role["Properties"].get("ManagedPolicyArns", [])
            managed = {arn for arn in attached if isinstance(arn, str)}
            assert managed <= allowed, f"SAM attached {managed - allowed} to {name}"
            # SAM attaches the VPC policy (network interfaces anywhere) whatever the VpcConfig's !If says:
            # outside a VPC the role also holds the policy that denies what it allows
            if vpc in managed:
                assert deny in attached, f"{name} may make network interfaces outside a VPC"


def test_backups_past_the_payload_limit_go_through_a_private_expiring_bucket(template):
    bucket = template["Resources"]["TransferBucket"]["Properties"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert [r["ExpirationInDays"] for r in bucket["LifecycleConfiguration"]["Rules"]] == [1]
    # the dashboard downloads and uploads through the presigned URLs from the browser, which needs CORS
    [cors] = bucket["CorsConfiguration"]["CorsRules"]
    assert set(cors["AllowedMethods"]) == {"GET", "POST"} and cors["AllowedHeaders"] == ["content-type"]
    functions = _functions(template)
    assert functions["ApiFunction"]["Environment"]["Variables"]["BRAIN_TRANSFER_BUCKET"] == {"Ref": "TransferBucket"}
    for name in functions:
        s3 = [s for s in _statements(template, name) if any(a.startswith("s3:") for a in s["actions"])]
        if name != "ApiFunction":
            assert not s3, f"{name} may reach the transfer bucket"
            continue
        [statement, deleting, listing] = s3
        assert sorted(statement["actions"]) == ["s3:GetObject", "s3:PutObject"]
        # an imported upload goes with its last page; an export stays for its download (the bucket's day)
        assert deleting["actions"] == ["s3:DeleteObject"]
        assert deleting["resources"] == [{"Fn::Sub": "${TransferBucket.Arn}/imports/*"}]
        assert {json.dumps(r) for r in statement["resources"]} == {
            json.dumps({"Fn::Sub": "${TransferBucket.Arn}/exports/*"}),
            json.dumps({"Fn::Sub": "${TransferBucket.Arn}/imports/*"})}
        # a missing upload must read as 404, not 403 (S3 says 403 without ListBucket): listing the uploads only
        assert listing["actions"] == ["s3:ListBucket"] and listing["resources"] == [{"Fn::GetAtt": [
            "TransferBucket", "Arn"]}]
        assert listing["condition"] == {"StringLike": {"s3:prefix": ["imports/*"]}}


# --- the MCP URL's edge (issue 46, item 3) ---


def test_the_mcp_url_is_behind_a_rate_limit_per_address_that_cannot_be_walked_around(template):
    resources = template["Resources"]
    assert int(template["Parameters"]["McpRateLimit"]["Default"]) >= 10  # on by default
    acl = resources["McpWebAcl"]["Properties"]
    assert acl["Scope"] == "CLOUDFRONT" and acl["DefaultAction"] == {"Allow": {}}
    limits = {r["Name"]: r["Statement"]["RateBasedStatement"] for r in acl["Rules"]}
    assert limits["requests-per-address"]["Limit"] == {"Ref": "McpRateLimit"}
    assert all(r["AggregateKeyType"] == "IP" for r in limits.values())
    assert all(r["Action"] == {"Block": {}} for r in acl["Rules"])
    register = limits["registrations-per-address"]["ScopeDownStatement"]["ByteMatchStatement"]
    assert register["SearchString"] == "/register" and limits["registrations-per-address"]["Limit"] <= 100
    edge = resources["McpDistribution"]["Properties"]["DistributionConfig"]
    assert edge["WebACLId"] == {"Fn::If": ["McpWafHere", {"Fn::GetAtt": ["McpWebAcl", "Arn"]}, {"Ref": "McpWebAclArn"}]}
    [origin] = edge["Origins"]
    assert "McpFunctionUrl.FunctionUrl" in json.dumps(origin["DomainName"]) or "McpFunctionUrl" in json.dumps(origin)
    [secret_header] = origin["OriginCustomHeaders"]
    assert secret_header["HeaderName"] == "x-brain-edge" and "McpEdgeSecret" in json.dumps(secret_header)
    # the function refuses what lacks that header: the same secret, in its environment, only with the edge on
    variables = _functions(template)["McpFunction"]["Environment"]["Variables"]
    assert variables["BRAIN_MCP_EDGE_SECRET"]["Fn::If"][0] == "McpEdge"
    assert "McpEdgeSecret" in json.dumps(variables["BRAIN_MCP_EDGE_SECRET"])
    assert "McpDistribution" in json.dumps(template["Outputs"]["McpUrl"])
    # outside us-east-1 the web ACL comes from infra/mcp-edge-waf.yaml, and the deploy says so
    rule = template["Rules"]["McpEdgeOutsideUsEast1"]
    assert rule["Assertions"][0]["Assert"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "McpWebAclArn"}, ""]}]}
    assert not _refused(template) and not _refused(template, McpRateLimit=0, **{"AWS::Region": "eu-west-1"})
    assert _refused(template, **{"AWS::Region": "eu-west-1"})  # elsewhere, without the web ACL made in us-east-1
    assert not _refused(template, McpWebAclArn="arn:aws:wafv2:us-east-1:1:global/webacl/x/1",
                        **{"AWS::Region": "eu-west-1"})
    outside = load_template(ROOT / "infra/mcp-edge-waf.yaml")["Resources"]["McpWebAcl"]["Properties"]["Rules"]
    assert [(r["Name"], r["Statement"]) for r in outside] == [(r["Name"], r["Statement"]) for r in acl["Rules"]]


# --- the search domain's access control and network (issue 46, item 4) ---


def _deep(value: object, template: dict, **overrides: object) -> object:
    """A value with every Fn::If in it resolved, at any depth (None: AWS::NoValue, dropped from lists)."""
    value = _resolved(value, template, **overrides)
    if isinstance(value, list):
        return [v for v in (_deep(item, template, **overrides) for item in value) if v is not None]
    if isinstance(value, dict):
        return {k: v for k, v in ((k, _deep(item, template, **overrides)) for k, item in value.items())
                if v is not None}
    return value


def _present(template: dict, name: str, **overrides: object) -> bool:
    condition = template["Resources"][name].get("Condition")
    parameters = _parameters(template, **overrides)
    return condition is None or bool(_value({"Condition": condition}, parameters, template["Conditions"]))


def test_fine_grained_access_maps_the_four_functions_from_a_master_role_that_reaches_only_the_security_api(template):
    resources = template["Resources"]
    domain = resources["SearchDomain"]["Properties"]
    assert _resolved(domain["AdvancedSecurityOptions"], template) is None  # iam: the default, as before
    fine = {"SearchAccessControl": "fine-grained"}
    assert _deep(domain["AdvancedSecurityOptions"], template, **fine) == {
        "Enabled": True, "InternalUserDatabaseEnabled": False,
        "MasterUserOptions": {"MasterUserARN": {"Fn::GetAtt": ["SearchAdminRole", "Arn"]}}}
    made = ["SearchAdminRole", "SearchAdminPolicy", "SearchAccessSetupFunction", "SearchAccessSetup",
            "SearchAuditLogs", "SearchAccessSetupLogs"]
    assert all(_present(template, name, **fine) for name in made)
    assert not any(_present(template, name) for name in made)
    # the master role: the security plugin's API on this domain, nothing else
    [statement] = resources["SearchAdminPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow" and set(statement["Action"]) == {"es:ESHttpGet", "es:ESHttpPut",
                                                                             "es:ESHttpPatch"}
    assert statement["Resource"] == {"Fn::Sub": "${SearchDomain.Arn}/_plugins/_security/api/*"}
    assert resources["SearchAdminPolicy"]["Properties"]["Roles"] == [{"Ref": "SearchAdminRole"}]
    trust = resources["SearchAdminRole"]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert [s["Principal"] for s in trust] == [{"Service": "lambda.amazonaws.com"}]
    # the setup runs as that role, once its policy is in place, and maps exactly the brain's four functions
    setup = resources["SearchAccessSetup"]
    assert setup["DependsOn"] == "SearchAdminPolicy"
    assert _ref(setup["Properties"]["ServiceToken"]) == "SearchAccessSetupFunction"
    assert _ref(resources["SearchAccessSetupFunction"]["Properties"]["Role"]) == "SearchAdminRole"
    # what it maps comes from its own environment (a forged request names nobody); the properties carry the
    # same, and the domain's endpoint, so a change to any of them (a new domain too) runs it again
    variables = resources["SearchAccessSetupFunction"]["Properties"]["Environment"]["Variables"]
    mapped = {_ref(arn) for arn in variables["BRAIN_SEARCH_FUNCTION_ROLES"]["Fn::Join"][1]}
    assert mapped == {f"{name}Role" for name in _functions(template)}
    assert variables["BRAIN_SEARCH_OPERATORS"] == {"Fn::Join": [",", {"Ref": "SearchOperatorArns"}]}
    assert {_ref(arn) for arn in setup["Properties"]["FunctionRoles"]} == mapped
    assert setup["Properties"]["Domain"] == {"Fn::GetAtt": ["SearchDomain", "DomainEndpoint"]}
    assert setup["Properties"]["Prefix"] == {"Ref": "SearchIndexPrefix"}
    assert setup["Properties"]["OperatorArns"] == {"Ref": "SearchOperatorArns"}
    handler = (ROOT / "functions/search_access/app.py").read_text()
    assert "from second_brain.aws.search_access import handle" in handler


def test_in_a_vpc_the_domain_and_the_functions_sit_in_its_private_subnets(template):
    resources = template["Resources"]
    domain = resources["SearchDomain"]["Properties"]
    shared = template["Globals"]["Function"]
    assert _resolved(domain["VPCOptions"], template) is None and _resolved(shared["VpcConfig"], template) is None
    subnets = {"VpcSubnetIds": "subnet-a,subnet-b,subnet-c", "VpcId": "vpc-1"}
    assert not _refused(template, **subnets)
    picked = {zones: _deep(domain["VPCOptions"], template, SearchZoneCount=zones, **subnets)["SubnetIds"]
              for zones in (1, 2, 3)}
    # a domain takes one subnet per zone it spreads over
    assert {zones: [s["Fn::Select"][0] for s in chosen] for zones, chosen in picked.items()} == {
        1: [0], 2: [0, 1], 3: [0, 1, 2]}
    assert _deep(domain["VPCOptions"], template, **subnets)["SecurityGroupIds"] == [{"Ref": "SearchSecurityGroup"}]
    assert _deep(shared["VpcConfig"], template, **subnets) == {
        "SubnetIds": "subnet-a,subnet-b,subnet-c", "SecurityGroupIds": [{"Ref": "FunctionsSecurityGroup"}]}
    # the domain answers HTTPS from the functions' group alone; the functions send HTTPS, and IMAP to a mailbox
    # (TLS on 993, STARTTLS on 143: the mailbox connector's two ports; issue 66 item 5, it could never connect)
    [ingress] = resources["SearchSecurityGroup"]["Properties"]["SecurityGroupIngress"]
    assert (ingress["FromPort"], ingress["ToPort"], _ref(ingress["SourceSecurityGroupId"])) == (
        443, 443, "FunctionsSecurityGroup")
    egress = resources["FunctionsSecurityGroup"]["Properties"]["SecurityGroupEgress"]
    assert sorted((e["IpProtocol"], e["FromPort"], e["ToPort"]) for e in egress) == [
        ("tcp", 143, 143), ("tcp", 443, 443), ("tcp", 993, 993)]
    mailbox = (ROOT / "src/second_brain/adapters/integrations/mail.py").read_text()
    assert '"993" if security == "tls" else "143"' in mailbox


@pytest.mark.parametrize("models", [
    {"Embedder": "bedrock", "Reranker": "bedrock", "LanguageModel": "bedrock"},
    {"Embedder": "sagemaker", "EmbeddingEndpointName": "e", "Reranker": "none", "LanguageModel": "none"},
])
def test_in_a_vpc_every_aws_service_the_functions_call_has_an_endpoint(template, models):
    """Functions in private subnets reach AWS only through endpoints (or a NAT of the operator's): the endpoints
    made are exactly the services the code calls with these models, and X-Ray for the traces."""
    calls = set(re.findall(r'clients\("([a-z0-9-]+)"', (ROOT / "src/second_brain/aws/composition.py").read_text()))
    calls -= {"ssm"}  # the owner token from an SSM parameter: the template passes a Secrets Manager secret
    needed = {"dynamodb", "s3", "kms", "secretsmanager", "xray"}
    needed |= {"bedrock-runtime"} if "bedrock" in (models["Embedder"], models["LanguageModel"]) else set()
    needed |= {"bedrock-agent-runtime"} if models["Reranker"] == "bedrock" else set()
    needed |= {"sagemaker.runtime"} if "sagemaker" in (models["Embedder"], models["Reranker"]) else set()
    assert {c.replace("sagemaker-runtime", "sagemaker.runtime") for c in calls} >= needed - {"xray"}
    parameters = {"VpcSubnetIds": "subnet-a", "VpcId": "vpc-1", "VpcRouteTableIds": "rtb-1",
                  "VpcInterfaceEndpoints": "create"} | models
    made = {resource["Properties"]["ServiceName"]["Fn::Sub"].rpartition("}.")[2]
            for name, resource in template["Resources"].items()
            if resource["Type"] == "AWS::EC2::VPCEndpoint" and _present(template, name, **parameters)}
    assert made == needed
    assert not any(_present(template, name, VpcSubnetIds="subnet-a", VpcId="vpc-1") for name, r in
                   template["Resources"].items() if r["Type"] == "AWS::EC2::VPCEndpoint")  # none unless asked


def test_outside_a_vpc_no_function_makes_a_network_interface(template):
    """SAM attaches AWSLambdaVPCAccessExecutionRole to every role once VpcConfig is in the Globals, even when
    its !If leaves the functions out of any VPC; outside a VPC a deny of that policy's writes is attached too."""
    policy = template["Resources"]["NoNetworkInterfaces"]
    assert policy["Condition"] == "OutsideVpc" and not _present(template, "NoNetworkInterfaces", VpcSubnetIds="s")
    [statement] = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Effect"] == "Deny" and statement["Resource"] == "*"
    # the writes of AWSLambdaVPCAccessExecutionRole (its other actions only describe)
    assert set(statement["Action"]) == {"ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface",
                                        "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"}
    for name, function in _functions(template).items():
        assert {"Fn::If": ["OutsideVpc", {"Ref": "NoNetworkInterfaces"}, {"Ref": "AWS::NoValue"}]} in function[
            "Policies"], name
