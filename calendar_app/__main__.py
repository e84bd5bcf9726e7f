from .cli import main
from .site.command import exit_now

exit_now(main())
