"""Errors in the interface's shape: {"code", "message", "data": {"status", ...}}."""

from __future__ import annotations


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, **data: object) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.data = data

    def body(self) -> dict:
        return {"code": self.code, "message": self.message,
                "data": {"status": self.status, **self.data}}


def missing(names: list[str]) -> ApiError:
    return ApiError(400, "rest_missing_callback_param",
                    f"Missing parameter(s): {', '.join(names)}", params=names)


def invalid(params: dict[str, str], details: dict | None = None) -> ApiError:
    return ApiError(400, "rest_invalid_param",
                    f"Invalid parameter(s): {', '.join(params)}",
                    params=params, details=details or [])


def wrong_type(name: str, type_name: str) -> ApiError:
    message = f"{name} is not of type {type_name}."
    return invalid({name: message}, {name: {"code": "rest_invalid_type", "message": message,
                                            "data": {"param": name}}})


def date_detail(name: str, reason: str) -> dict:
    """The reason a date was refused, as WordPress gives a validator's error in
    `data.details` (the plugin itself says only "Invalid parameter.")."""
    return {"code": "rest_invalid_date", "message": f"Invalid date: {reason}.",
            "data": {"param": name}}


def invalid_date(name: str, reason: str) -> ApiError:
    return invalid({name: "Invalid parameter."}, {name: date_detail(name, reason)})


def forbidden(authenticated: bool) -> ApiError:
    return ApiError(403 if authenticated else 401, "rest_forbidden",
                    "Sorry, you are not allowed to do that.")


NO_ROUTE = "No route was found matching the URL and request method."
