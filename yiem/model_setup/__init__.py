"""The model setup Chat, Compare and Experiments share: what a message is sent with, and its `connect`."""

from yiem.model_setup._choices import (
    KeyStatus,
    available_models,
    configured_provider,
    default_settings,
    key_status,
    starting_base_url,
)
from yiem.model_setup._connect import connect, local_model, register_server_secrets, running_local_model
from yiem.model_setup._images import PICTURE_FORMATS, ImageDataError, check_image, image_bytes
from yiem.model_setup._model import (
    DEFAULT_MODELS,
    LOCAL,
    MAX_TOKENS_LIMIT,
    ModelSettingsError,
    ModelSetup,
    Preset,
    ResponseSchemaError,
    SamplingModel,
    asks_base_url,
    calls_tools,
    parse_response_schema,
    response_schema_note,
    takes_images,
)
from yiem.model_setup._templates import fill_template, template_variables

__all__ = [
    "DEFAULT_MODELS",
    "LOCAL",
    "MAX_TOKENS_LIMIT",
    "PICTURE_FORMATS",
    "ImageDataError",
    "KeyStatus",
    "ModelSettingsError",
    "ModelSetup",
    "Preset",
    "ResponseSchemaError",
    "SamplingModel",
    "asks_base_url",
    "available_models",
    "calls_tools",
    "check_image",
    "configured_provider",
    "connect",
    "default_settings",
    "fill_template",
    "image_bytes",
    "key_status",
    "local_model",
    "parse_response_schema",
    "register_server_secrets",
    "response_schema_note",
    "running_local_model",
    "starting_base_url",
    "takes_images",
    "template_variables",
]
