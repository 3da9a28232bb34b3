/* placeholder until the models land */
int main(void) { return 0; }
