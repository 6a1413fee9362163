from gpuprice.cli import main

main()
