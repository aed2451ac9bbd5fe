"""What X-Ray traces in the functions: the AWS SDK's calls only (their operation, table, bucket or key; never their
bodies). Powertools' default patches every library it knows, httpx and requests among them, and their subsegments
keep the URL of every outbound call for 30 days: a calendar's secret feed address, a Notion page, a push service's
endpoint, an OpenSearch document's path. A forgotten memory must not live on there."""

TRACED = ("botocore",)
