// Mantine's styles past the first paint's (see first-paint-styles.ts); loaded through withRestStyles.
import 'virtual:mantine-rest.css';
