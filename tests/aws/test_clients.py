"""The AWS clients a function makes (aws/composition.Clients): one boto3 session per process and environment, so a
service's model is parsed once however many brains are built (a warm function's rebuild, a test's many brains), and
a change of environment (another region, other credentials) is never answered with the old session's."""

from botocore.loaders import JSONFileLoader

from second_brain.aws.composition import Clients, default_session


def test_a_second_set_of_clients_parses_no_model_again(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    parsed: list[str] = []
    load = JSONFileLoader.load_file
    monkeypatch.setattr(JSONFileLoader, "load_file", lambda self, path: parsed.append(path) or load(self, path))
    first = Clients()("dynamodb")
    assert parsed  # the model, the first time in this environment
    parsed.clear()
    second = Clients()("dynamodb")
    assert parsed == [] and second is not first
    assert Clients()("dynamodb", read_timeout=1.0).meta.config.read_timeout == 1.0


def test_another_environment_gets_a_session_of_its_own(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_REGION", raising=False)
    session = default_session()
    assert default_session() is session
    assert Clients()("dynamodb").meta.region_name == "us-east-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert default_session() is not session
    assert Clients()("dynamodb").meta.region_name == "eu-west-1"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "another-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "another-secret")
    assert default_session().get_credentials().access_key == "another-key"
