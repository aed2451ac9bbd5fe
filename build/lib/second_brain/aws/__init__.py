"""The brain on AWS: DynamoDB for the log, OpenSearch for reads and search, Bedrock or SageMaker for models."""
