from rein.cli import main

raise SystemExit(main())
