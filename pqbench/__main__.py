from pqbench.cli import main

main()
