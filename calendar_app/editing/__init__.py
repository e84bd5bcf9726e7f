"""The editing pages (`/admin/`), the public submission form and the moderation queue."""
